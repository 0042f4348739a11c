import CMalloc
import COpenSSL
import Foundation

/// Timing, memory and hashing helpers shared by the benchmarks.
enum Measure {
    /// Seconds taken by `body`.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).seconds
    }

    /// A field of /proc/self/status in MiB (VmRSS: resident now, VmHWM: peak).
    static func statusMB(_ field: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
            return (kilobytes.flatMap { Double($0) } ?? 0) / 1024
        }
        return 0
    }

    static var residentMB: Double { statusMB("VmRSS") }

    /// Bytes the program holds in malloc'd blocks (glibc's `mallinfo2`): live
    /// heap, without the allocator's free lists and fragmentation.
    static var heapInUseMB: Double {
        let info = mallinfo2()
        return Double(info.uordblks + info.hblkhd) / 1_048_576
    }

    /// Bytes malloc holds free in its arenas (glibc's `mallinfo2`): memory
    /// the program freed that stays resident where it is interleaved with live blocks.
    static var heapFreeMB: Double { Double(mallinfo2().fordblks) / 1_048_576 }

    /// Returns freed heap pages to the system (glibc's `malloc_trim(0)`).
    @discardableResult
    static func trimMalloc() -> Int32 { malloc_trim(0) }
    static var peakMB: Double { statusMB("VmHWM") }

    /// Lowercase hex SHA-256 (OpenSSL).
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { input in
            _ = SHA256(input.baseAddress, input.count, &digest)
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// Rounds for printing.
func rounded(_ value: Double, _ places: Int) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}
