/// Real media files made in memory for tests and benchmarks: PNG images of
/// any size (stored, uncompressed deflate blocks, so a big one is quick to
/// make) and PCM WAV sounds. Each is valid for any decoder (checked against
/// `ffprobe` when the suites were written).
package enum TestMedia {
    /// A `width`×`height` RGB PNG whose pixels come from `seed` (different
    /// seeds, different bytes and hashes).
    package static func png(width: Int, height: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for _ in 0..<height {
            raw.append(0)  // filter: none
            var row = 0
            while row < width * 3 {
                let word = generator.next()
                for shift in stride(from: 0, to: 64, by: 8) where row < width * 3 {
                    raw.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
                    row += 1
                }
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8-bit, RGB, deflate, no filter method, no interlace
        png += chunk("IHDR", header)
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    /// A `width`×`height` RGB PNG whose pixel at (x, y) is `colour(x, y)`:
    /// a picture whose placement a test can check by sampling a render.
    package static func png(width: Int, height: Int, colour: (_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                let (red, green, blue) = colour(x, y)
                raw += [red, green, blue]
            }
        }
        var header: [UInt8] = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8-bit, RGB, deflate, no filter method, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// A PNG of about `bytes` bytes (a square image).
    package static func png(ofAbout bytes: Int, seed: UInt64 = 1) -> [UInt8] {
        let side = max(1, Int(Double(bytes / 3).squareRoot()))
        return png(width: side, height: side, seed: seed)
    }

    /// A mono 16-bit PCM WAV of `seconds` at `rate` Hz (a quiet noise from `seed`).
    package static func wav(seconds: Double, rate: Int = 8000, seed: UInt64 = 1) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        let samples = Int(seconds * Double(rate))
        var data: [UInt8] = []
        data.reserveCapacity(samples * 2)
        for _ in 0..<samples {
            let sample = Int16(truncatingIfNeeded: generator.next() % 2000) - 1000
            data += littleEndian(UInt16(bitPattern: sample))
        }
        var wav: [UInt8] = Array("RIFF".utf8) + littleEndian(UInt32(36 + data.count)) + Array("WAVE".utf8)
        wav += Array("fmt ".utf8) + littleEndian(UInt32(16)) + littleEndian(UInt16(1)) + littleEndian(UInt16(1))
        wav += littleEndian(UInt32(rate)) + littleEndian(UInt32(rate * 2)) + littleEndian(UInt16(2)) + littleEndian(UInt16(16))
        wav += Array("data".utf8) + littleEndian(UInt32(data.count)) + data
        return wav
    }

    // MARK: - Pieces

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    /// zlib with stored (uncompressed) deflate blocks.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let isLast = offset + count >= data.count
            out.append(isLast ? 1 : 0)
            out += littleEndian(UInt16(count))
            out += littleEndian(~UInt16(count))
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        out += bigEndian(adler32(data))
        return out
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        var index = 0
        while index < data.count {
            let end = min(index + 5552, data.count)
            while index < end {
                a &+= UInt32(data[index])
                b &+= a
                index += 1
            }
            a %= 65_521
            b %= 65_521
        }
        return b << 16 | a
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] { bigEndian(value).reversed() }

    static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)] }
}
