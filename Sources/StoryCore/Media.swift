/// The SHA-256 of a blob's bytes: what a document holds instead of the bytes
/// (`MediaReference`), and the blob's name in the blob store and on the wire.
/// Its `description` is the 64 lowercase hex digits `sha256sum` prints.
package typealias BlobHash = Digest32

extension Digest32 {
    /// Parses 64 hex digits (either case); nil for anything else.
    package init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The media a shot may hold, detected from the bytes (never the file name):
/// images for image layers, sound for a shot's sound.
package enum MediaType: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case png = 1
    case jpeg = 2
    case webp = 3
    case wav = 16
    case mp3 = 17
    /// AAC in an MPEG-4 container (.m4a).
    case m4a = 18
    /// Opus or Vorbis in Ogg.
    case ogg = 19
    case flac = 20

    /// The MIME type (`Content-Type`).
    package var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .webp: "image/webp"
        case .wav: "audio/wav"
        case .mp3: "audio/mpeg"
        case .m4a: "audio/mp4"
        case .ogg: "audio/ogg"
        case .flac: "audio/flac"
        }
    }

    /// The type with that MIME type (or one of its usual aliases).
    package init?(mimeType: String) {
        let lowered = mimeType.lowercased()
        let aliases: [String: MediaType] = [
            "image/jpg": .jpeg, "audio/x-wav": .wav, "audio/wave": .wav, "audio/mp3": .mp3,
            "audio/x-m4a": .m4a, "audio/aac": .m4a, "audio/opus": .ogg, "audio/x-flac": .flac,
        ]
        if let type = MediaType.allCases.first(where: { $0.mimeType == lowered }) ?? aliases[lowered] {
            self = type
        } else {
            return nil
        }
    }

    /// Whether this is a picture (for image layers).
    package var isImage: Bool { rawValue < 16 }

    /// Whether this is sound (for a shot's sound).
    package var isSound: Bool { !isImage }

    /// The usual file name extension, without the dot.
    package var fileExtension: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpg"
        case .webp: "webp"
        case .wav: "wav"
        case .mp3: "mp3"
        case .m4a: "m4a"
        case .ogg: "ogg"
        case .flac: "flac"
        }
    }

    /// What users call it ("PNG image").
    package var description: String {
        switch self {
        case .png: "PNG image"
        case .jpeg: "JPEG image"
        case .webp: "WebP image"
        case .wav: "WAV sound"
        case .mp3: "MP3 sound"
        case .m4a: "AAC (M4A) sound"
        case .ogg: "Ogg sound"
        case .flac: "FLAC sound"
        }
    }
}

/// What a document holds of an image or a sound: the blob's hash, type and
/// size, the picture's pixel size or the sound's duration, and for a shot's
/// sound where it starts. The bytes live in the blob store.
package struct MediaReference: Hashable, Sendable {
    package var hash: BlobHash
    package var type: MediaType
    /// The blob's length in bytes.
    package var byteCount: UInt64
    /// Pixels (images; 0 for sound).
    package var pixelWidth: UInt32
    package var pixelHeight: UInt32
    /// Seconds (sound; 0 for images).
    package var duration: Double
    /// Seconds into the shot at which a sound starts (0 for images).
    package var offset: Double

    package init(
        hash: BlobHash, type: MediaType, byteCount: UInt64, pixelWidth: UInt32 = 0, pixelHeight: UInt32 = 0,
        duration: Double = 0, offset: Double = 0
    ) {
        self.hash = hash
        self.type = type
        self.byteCount = byteCount
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.duration = duration
        self.offset = offset
    }

    /// Largest blob a reference may name (a peer cannot make others fetch more).
    package static let maximumByteCount: UInt64 = 1 << 40

    /// Whether the numbers are in range: a known size, pixels for an image,
    /// a finite duration and offset for a sound.
    package var isWellFormed: Bool {
        guard byteCount > 0, byteCount <= Self.maximumByteCount, duration.isFinite, offset.isFinite,
            duration >= 0, offset >= 0, duration <= 86_400, offset <= 86_400
        else { return false }
        if type.isImage { return pixelWidth > 0 && pixelHeight > 0 && pixelWidth <= 1 << 16 && pixelHeight <= 1 << 16 }
        return pixelWidth == 0 && pixelHeight == 0
    }
}

extension ByteWriter {
    mutating func write(media: MediaReference) {
        write(raw: media.hash.bytes)
        write(byte: media.type.rawValue)
        write(varint: media.byteCount)
        write(varint: UInt64(media.pixelWidth))
        write(varint: UInt64(media.pixelHeight))
        write(double: media.duration)
        write(double: media.offset)
    }
}

extension ByteReader {
    mutating func readMedia() throws(CodecError) -> MediaReference {
        let start = offset
        guard let hash = BlobHash(try readSlice(count: 32)) else {
            throw CodecError(.invalidValue, "a blob hash is 32 bytes", offset: start)
        }
        let typeByte = try readByte()
        guard let type = MediaType(rawValue: typeByte) else {
            throw CodecError(.invalidValue, "unknown media type \(typeByte)", offset: start)
        }
        let byteCount = try readVarint()
        let width = try readVarint()
        let height = try readVarint()
        let duration = try readFiniteDouble("media duration")
        let mediaOffset = try readFiniteDouble("media offset")
        guard width <= UInt64(UInt32.max), height <= UInt64(UInt32.max) else {
            throw CodecError(.invalidValue, "an image of \(width)×\(height) pixels", offset: start)
        }
        let media = MediaReference(
            hash: hash, type: type, byteCount: byteCount, pixelWidth: UInt32(width), pixelHeight: UInt32(height),
            duration: duration, offset: mediaOffset)
        guard media.isWellFormed else { throw CodecError(.invalidValue, "a media reference out of range", offset: start) }
        return media
    }
}
