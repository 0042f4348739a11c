package import StoryCore

/// What `MediaProbe` found in a file: its type and, for an image, its pixel
/// size, or for a sound, how long it lasts.
package struct MediaInfo: Hashable, Sendable {
    /// The format, detected from the bytes.
    package var type: MediaType
    /// Pixels (images, 1…65536; 0 for sound).
    package var pixelWidth: UInt32
    package var pixelHeight: UInt32
    /// Seconds (sound, 0…86400; 0 for images).
    package var duration: Double

    /// A description of a file.
    package init(type: MediaType, pixelWidth: UInt32 = 0, pixelHeight: UInt32 = 0, duration: Double = 0) {
        self.type = type
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.duration = duration
    }
}

/// Detects from the bytes (never a file name) what image or sound a file
/// is, and checks that it is whole and sound before Storyteller stores and
/// shares it: every length is checked against the file, every checksum the
/// format has is verified, and a file cut short is reported as such.
///
/// Nothing in a file is trusted: every loop moves forward through the file
/// (so it ends), reads are at most 64 KiB, and memory stays bounded whatever
/// the file's size or what its headers claim.
package enum MediaProbe {
    /// Largest width or height of an image, in pixels (as `MediaReference`).
    static let maximumPixelSize: UInt64 = 1 << 16
    /// Longest sound, in seconds (as `MediaReference`): a day.
    static let maximumDuration: Double = 86_400

    /// The type of the file and its pixel size or duration.
    ///
    /// Cost: reads the whole file once for the formats whose integrity can
    /// only be checked that way (PNG checksums, JPEG's end marker, Ogg pages,
    /// MP3 frames when no header gives the count); a few reads for the others.
    /// - Throws: `MediaError`: `.unrecognized` for anything but PNG, JPEG,
    ///   WebP, WAV, MP3, M4A, Ogg (Opus, Vorbis) and FLAC (with a hint of what
    ///   the file seems to be), `.truncated` for a file cut short (or empty),
    ///   `.malformed` for damaged contents, `.unreadable` when the source fails.
    package static func probe(_ source: some MediaSource) throws(MediaError) -> MediaInfo {
        var reader = MediaReader(source)
        guard reader.byteCount > 0 else {
            throw MediaError(.truncated, "the file is empty: it holds no image or sound")
        }
        let head = try reader.bytes(at: 0, count: 512)
        let (type, start) = try detectedType(&reader, head: head)
        switch type {
        case .png: return try probePNG(&reader)
        case .jpeg: return try probeJPEG(&reader)
        case .webp: return try probeWebP(&reader)
        case .wav: return try probeWAV(&reader)
        case .mp3: return try probeMP3(&reader, at: start)
        case .m4a: return try probeM4A(&reader)
        case .ogg: return try probeOgg(&reader)
        case .flac: return try probeFLAC(&reader, at: start)
        }
    }

    /// The type the file's first bytes announce and where its data starts (past
    /// ID3 tags, which may precede MP3 and FLAC).
    /// - Throws: `.unrecognized` with a hint when it is none of them.
    private static func detectedType<Source>(
        _ reader: inout MediaReader<Source>, head: [UInt8]
    ) throws(MediaError) -> (MediaType, start: UInt64) {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return (.png, 0) }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return (.jpeg, 0) }
        if head.matches("RIFF") && head.matches("WEBP", at: 8) { return (.webp, 0) }
        if head.matches("RIFF") && head.matches("WAVE", at: 8) { return (.wav, 0) }
        if head.matches("OggS") { return (.ogg, 0) }
        if head.matches("fLaC") { return (.flac, 0) }
        if head.matches("ftyp", at: 4) {
            if let looksLike = mpeg4NonAudioKind(head) { throw .unrecognized(looksLike: looksLike) }
            return (.m4a, 0)
        }
        if head.matches("ID3") { return try typeAfterID3(&reader) }
        if try isMP3Stream(&reader, at: 0) { return (.mp3, 0) }
        throw unrecognized(head)
    }

    /// An image's info, once its pixel size is checked.
    /// - Throws: `.malformed` for a zero or too large side.
    static func image(_ type: MediaType, width: UInt64, height: UInt64) throws(MediaError) -> MediaInfo {
        guard width > 0, height > 0 else { throw .damaged(type, "it claims to be \(width)×\(height) pixels") }
        guard width <= maximumPixelSize, height <= maximumPixelSize else {
            throw MediaError(
                .malformed,
                "the \(type) is too large: \(width)×\(height) pixels, more than the \(maximumPixelSize) a side Storyteller takes"
            )
        }
        return MediaInfo(type: type, pixelWidth: UInt32(width), pixelHeight: UInt32(height))
    }

    /// A sound's info, once its duration is checked.
    /// - Throws: `.malformed` for a duration that is not a number or longer than a day.
    static func sound(_ type: MediaType, duration: Double) throws(MediaError) -> MediaInfo {
        guard duration.isFinite, duration >= 0 else { throw .damaged(type, "it claims an impossible duration") }
        guard duration <= maximumDuration else {
            let hours = Int(duration / 3600)
            throw MediaError(
                .malformed,
                "the \(type) is too long: it claims to last \(hours) hours, more than the day Storyteller takes")
        }
        return MediaInfo(type: type, duration: duration)
    }
}
