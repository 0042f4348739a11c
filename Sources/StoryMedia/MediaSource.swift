import StoryCore

/// Random-access bytes of a file being checked (the daemon implements it over a file descriptor; tests over an array).
package protocol MediaSource {
    /// The file's length in bytes.
    var byteCount: UInt64 { get }
    /// Up to `count` bytes at `offset` (fewer only at the end).
    /// - Throws: `MediaError` of kind `.unreadable` when the bytes cannot be read.
    func read(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8]
}

/// Bytes in memory as a `MediaSource`.
package struct BytesMediaSource: MediaSource, Sendable {
    private let bytes: [UInt8]

    /// A source over these bytes.
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package var byteCount: UInt64 { UInt64(bytes.count) }

    package func read(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8] {
        guard offset < UInt64(bytes.count), count > 0 else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<start + min(count, bytes.count - start)])
    }
}

/// Reads a `MediaSource` for the probes: never more than 64 KiB at a time,
/// through one 64 KiB window so that walking small headers (chunks, frames,
/// pages) costs one source read per window, not one per header.
///
/// It holds at most one window, whatever the file's size, and checks that
/// the source keeps its promise (exactly the bytes asked for, fewer only at
/// the end) so that a probe's bounds checks can rely on what it returns.
struct MediaReader<Source: MediaSource> {
    /// The largest read made from the source.
    static var pieceSize: Int { 1 << 16 }

    let source: Source
    /// The file's length, read once: every bound is checked against it.
    let byteCount: UInt64
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0

    init(_ source: Source) {
        self.source = source
        byteCount = source.byteCount
    }

    /// Bytes left from `offset` to the end of the file (0 past the end).
    func remaining(from offset: UInt64) -> UInt64 {
        offset < byteCount ? byteCount - offset : 0
    }

    /// Up to `count` bytes (at most 64 KiB) at `offset`: fewer only at the end of the file.
    /// - Throws: `MediaError` when the source fails or returns fewer bytes than the file holds.
    mutating func bytes(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8] {
        precondition(count >= 0 && count <= Self.pieceSize, "reads are at most 64 KiB")
        let wanted = Int(min(UInt64(count), remaining(from: offset)))
        guard wanted > 0 else { return [] }
        if offset >= windowStart, offset - windowStart <= UInt64(window.count),
            Int(offset - windowStart) + wanted <= window.count
        {
            let start = Int(offset - windowStart)
            return Array(window[start..<start + wanted])
        }
        window = []
        window = try fetch(at: offset, count: Self.pieceSize)
        windowStart = offset
        return Array(window.prefix(wanted))
    }

    /// Exactly `count` bytes (at most 64 KiB) at `offset`, or `error` when the file ends first.
    mutating func bytes(
        at offset: UInt64, count: Int, orElse error: @autoclosure () -> MediaError
    ) throws(MediaError) -> [UInt8] {
        let bytes = try bytes(at: offset, count: count)
        guard bytes.count == count else { throw error() }
        return bytes
    }

    /// Calls `body` with consecutive pieces of at most 64 KiB covering `count`
    /// bytes at `offset`, which the caller has checked lie inside the file.
    /// Cost: reads those bytes once.
    mutating func forEachPiece(
        at offset: UInt64, count: UInt64, _ body: ([UInt8]) -> Void
    ) throws(MediaError) {
        precondition(count <= remaining(from: offset), "pieces inside the file")
        var position = offset
        let end = offset + count
        // Each round consumes a non-empty piece: at most count / 64 KiB + 1 rounds.
        while position < end {
            let piece = try bytes(at: position, count: Int(min(end - position, UInt64(Self.pieceSize))))
            guard !piece.isEmpty else { throw Self.shortRead(at: position, of: byteCount) }
            body(piece)
            position += UInt64(piece.count)
        }
    }

    /// `count` bytes at `offset` straight from the source, which must return
    /// them all unless the file ends first.
    private func fetch(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8] {
        let expected = Int(min(UInt64(count), remaining(from: offset)))
        let piece = try source.read(at: offset, count: expected)
        guard piece.count == expected else {
            throw Self.shortRead(at: offset + UInt64(min(piece.count, expected)), of: byteCount)
        }
        return piece
    }

    private static func shortRead(at offset: UInt64, of byteCount: UInt64) -> MediaError {
        MediaError(.unreadable, "the file could not be read: it gave out at byte \(offset) of \(byteCount)")
    }
}

/// Fixed-width integers and tags inside a header already read. Callers check
/// the header's length first; these trap on a bad index like any subscript.
extension Array where Element == UInt8 {
    func uint16(bigEndianAt index: Int) -> UInt16 {
        UInt16(self[index]) << 8 | UInt16(self[index + 1])
    }

    func uint24(bigEndianAt index: Int) -> UInt32 {
        UInt32(self[index]) << 16 | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2])
    }

    func uint32(bigEndianAt index: Int) -> UInt32 {
        UInt32(uint16(bigEndianAt: index)) << 16 | UInt32(uint16(bigEndianAt: index + 2))
    }

    func uint64(bigEndianAt index: Int) -> UInt64 {
        UInt64(uint32(bigEndianAt: index)) << 32 | UInt64(uint32(bigEndianAt: index + 4))
    }

    func uint16(littleEndianAt index: Int) -> UInt16 {
        UInt16(self[index]) | UInt16(self[index + 1]) << 8
    }

    func uint24(littleEndianAt index: Int) -> UInt32 {
        UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16
    }

    func uint32(littleEndianAt index: Int) -> UInt32 {
        UInt32(uint16(littleEndianAt: index)) | UInt32(uint16(littleEndianAt: index + 2)) << 16
    }

    func uint64(littleEndianAt index: Int) -> UInt64 {
        UInt64(uint32(littleEndianAt: index)) | UInt64(uint32(littleEndianAt: index + 4)) << 32
    }

    /// Whether the bytes at `index` spell `tag` (false when they run past the end).
    func matches(_ tag: StaticString, at index: Int = 0) -> Bool {
        let count = tag.utf8CodeUnitCount
        guard index >= 0, index <= self.count - count else { return false }
        return tag.withUTF8Buffer { tagBytes in
            var offset = 0
            while offset < count {
                if self[index + offset] != tagBytes[offset] { return false }
                offset += 1
            }
            return true
        }
    }

    /// Four bytes at `index` as text ("IDAT", "fmt "), for comparisons: bytes
    /// other than printable ASCII become "?", which no name contains.
    func fourCC(at index: Int) -> String {
        guard index >= 0, index <= count - 4 else { return "?" }
        let printable = self[index..<index + 4].map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }
        return String(decoding: printable, as: UTF8.self)
    }
}

extension String {
    /// How a message names the chunk or box with this four-character code at
    /// `offset`: by its name ("its IDAT chunk") when it is letters, digits and
    /// spaces, as real names are, else by its place, not by garbage.
    func chunkLabel(_ noun: String, at offset: UInt64) -> String {
        let isName = utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x20
        }
        return isName ? "its \(trimmingSuffixSpaces) \(noun)" : "a \(noun) at byte \(offset)"
    }

    /// The string without the spaces that pad four-character codes ("qt  ").
    var trimmingSuffixSpaces: String {
        var text = Substring(self)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
