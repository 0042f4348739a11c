import StoryCore

/// The four-byte header of an MPEG audio layer III frame (ISO 11172-3,
/// ISO 13818-3 and the unofficial MPEG 2.5 extension).
struct MPEGAudioFrameHeader: Equatable {
    enum Version { case mpeg1, mpeg2, mpeg25 }

    var version: Version
    /// Bits a second.
    var bitrate: Int
    /// Samples a second.
    var sampleRate: Int
    var hasPadding: Bool
    var isMono: Bool

    /// Kilobits a second by bitrate index (0 is "free format", which players rarely support).
    private static let mpeg1Bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let mpeg2Bitrates = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]

    /// The layer III header at `index`, or nil when the bytes are not one
    /// (free-format bitrate and reserved values included).
    init?(_ bytes: [UInt8], at index: Int = 0) {
        guard index >= 0, index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] & 0xE0 == 0xE0 else {
            return nil
        }
        let (b1, b2, b3) = (bytes[index + 1], bytes[index + 2], bytes[index + 3])
        switch (b1 >> 3) & 3 {
        case 0: version = .mpeg25
        case 2: version = .mpeg2
        case 3: version = .mpeg1
        default: return nil
        }
        let bitrateIndex = Int(b2 >> 4)
        let sampleRateIndex = Int((b2 >> 2) & 3)
        guard (b1 >> 1) & 3 == 1, bitrateIndex != 0, bitrateIndex != 15, sampleRateIndex != 3, b3 & 3 != 2 else {
            return nil
        }
        bitrate = (version == .mpeg1 ? Self.mpeg1Bitrates : Self.mpeg2Bitrates)[bitrateIndex] * 1000
        let sampleRates =
            switch version {
            case .mpeg1: [44_100, 48_000, 32_000]
            case .mpeg2: [22_050, 24_000, 16_000]
            case .mpeg25: [11_025, 12_000, 8_000]
            }
        sampleRate = sampleRates[sampleRateIndex]
        hasPadding = (b2 >> 1) & 1 == 1
        isMono = b3 >> 6 == 3
    }

    /// The frame's length in bytes, header included (at least 24).
    var frameLength: Int { (version == .mpeg1 ? 144 : 72) * bitrate / sampleRate + (hasPadding ? 1 : 0) }

    /// The shortest frame this stream can have: the lowest bitrate, no padding.
    var shortestFrameLength: Int { (version == .mpeg1 ? 144 * 32_000 : 72 * 8_000) / sampleRate }

    /// Samples each frame decodes to.
    var samplesPerFrame: Int { version == .mpeg1 ? 1152 : 576 }

    /// Bytes of side information after the header, where a Xing or Info tag begins.
    var sideInformationLength: Int {
        switch (version, isMono) {
        case (.mpeg1, true): 17
        case (.mpeg1, false): 32
        case (_, true): 9
        case (_, false): 17
        }
    }

    /// Whether a frame can follow this one in the same stream (bitrate and
    /// padding may change from frame to frame; version and rate may not).
    func continues(_ other: MPEGAudioFrameHeader) -> Bool {
        version == other.version && sampleRate == other.sampleRate
    }

    /// The MPEG audio layer (1, 2 or 3) of a plausible frame header at the
    /// start of `bytes`, or 0 for an AAC ADTS header; nil for neither.
    static func layer(of bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
        let layerBits = Int((bytes[1] >> 1) & 3)
        if layerBits == 0 { return bytes[1] & 0xF0 == 0xF0 && (bytes[2] >> 2) & 0xF < 13 ? 0 : nil }
        let bitrateIndex = bytes[2] >> 4
        guard (bytes[1] >> 3) & 3 != 1, bitrateIndex != 0, bitrateIndex != 15, (bytes[2] >> 2) & 3 != 3 else {
            return nil
        }
        return 4 - layerBits
    }
}

extension MediaProbe {
    /// The type of a file that begins with ID3v2 tags: MP3 usually, FLAC sometimes.
    static func typeAfterID3<Source>(
        _ reader: inout MediaReader<Source>
    ) throws(MediaError) -> (MediaType, start: UInt64) {
        var start = try offsetAfterID3Tags(&reader)
        // Some taggers pad with zeros the tag's size does not count.
        let padding = try reader.bytes(at: start, count: MediaReader<Source>.pieceSize)
        start += UInt64(padding.prefix(while: { $0 == 0 }).count)
        let head = try reader.bytes(at: start, count: 4)
        if head.isEmpty { throw .cutShort(.mp3, "it ends after its tag (ID3), before any sound") }
        if head.matches("fLaC") { return (.flac, start) }
        if MPEGAudioFrameHeader(head) != nil { return (.mp3, start) }
        if MPEGAudioFrameHeader.layer(of: head) != nil { throw unrecognized(head) }
        throw .damaged(.mp3, "no MPEG audio frame follows its tag (ID3)")
    }

    /// Where the sound starts after the ID3v2 tags at the start of the file.
    private static func offsetAfterID3Tags<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> UInt64 {
        var offset: UInt64 = 0
        // A file may hold a few tags one after another; more is not a tag but an attack.
        for _ in 0..<8 {
            let header = try reader.bytes(at: offset, count: 10)
            guard header.matches("ID3") else { return offset }
            guard header.count == 10 else { throw .cutShort(.mp3, "it ends inside its tag (ID3)") }
            guard header[3] != 0xFF, header[4] != 0xFF, header[6..<10].allSatisfy({ $0 < 0x80 }) else {
                throw .damaged(.mp3, "its tag (ID3) has an impossible size")
            }
            // A "synchsafe" integer: 7 bits a byte.
            let size = header[6..<10].reduce(UInt64(0)) { $0 << 7 | UInt64($1) }
            let footer: UInt64 = header[5] & 0x10 != 0 ? 10 : 0
            guard 10 + size + footer <= reader.remaining(from: offset) else {
                throw .cutShort(.mp3, "it ends inside its tag (ID3)")
            }
            offset += 10 + size + footer
        }
        throw .damaged(.mp3, "it begins with more tags (ID3) than any player reads")
    }

    /// Whether the file holds MPEG layer III frames at `offset` with no tag
    /// before them: a valid header followed by a second one or by the end of
    /// the file (one valid-looking header alone is too easily random bytes).
    static func isMP3Stream<Source>(_ reader: inout MediaReader<Source>, at offset: UInt64) throws(MediaError) -> Bool {
        guard let first = MPEGAudioFrameHeader(try reader.bytes(at: offset, count: 4)) else { return false }
        let next = offset + UInt64(first.frameLength)
        if next == reader.byteCount { return true }
        guard let second = MPEGAudioFrameHeader(try reader.bytes(at: next, count: 4)) else { return false }
        return first.continues(second)
    }

    /// An MP3's duration: from its Xing, Info or VBRI header when it has one
    /// (checked against the file's size), else by walking every frame.
    ///
    /// Cost: a few reads with such a header; otherwise one 4-byte header a
    /// frame, read through a 64 KiB window (the whole file, bounded memory).
    static func probeMP3<Source>(_ reader: inout MediaReader<Source>, at start: UInt64) throws(MediaError) -> MediaInfo {
        let frame = try reader.bytes(at: start, count: 64)
        guard let first = MPEGAudioFrameHeader(frame) else {
            throw .damaged(.mp3, "its sound does not begin with an MPEG audio frame")
        }
        let available = reader.remaining(from: start)
        let summary = frameSummary(frame, first)
        if let frames = summary.frames, frames > 0 {
            if let streamBytes = summary.streamBytes, streamBytes > available {
                throw .cutShort(
                    .mp3, "its header promises \(streamBytes) bytes of sound but the file holds \(available)")
            }
            guard frames * UInt64(first.shortestFrameLength) <= available else {
                throw .cutShort(.mp3, "its header counts \(frames) frames, more than the file holds")
            }
            let next = start + UInt64(first.frameLength)
            if next < reader.byteCount {
                guard let second = MPEGAudioFrameHeader(try reader.bytes(at: next, count: 4)), first.continues(second)
                else { throw .damaged(.mp3, "no frame follows its first one") }
            }
            return try sound(.mp3, duration: Double(frames) * Double(first.samplesPerFrame) / Double(first.sampleRate))
        }
        let frames = try countedFrames(&reader, from: start, first, skippingFirst: summary.isTag)
        return try sound(.mp3, duration: Double(frames) * Double(first.samplesPerFrame) / Double(first.sampleRate))
    }

    /// What a first frame's Xing/Info (LAME) or VBRI (Fraunhofer) header says:
    /// the number of frames and of bytes in the stream, when it gives them.
    private static func frameSummary(
        _ frame: [UInt8], _ header: MPEGAudioFrameHeader
    ) -> (isTag: Bool, frames: UInt64?, streamBytes: UInt64?) {
        let tag = 4 + header.sideInformationLength
        if frame.matches("Xing", at: tag) || frame.matches("Info", at: tag), frame.count >= tag + 16 {
            let flags = frame.uint32(bigEndianAt: tag + 4)
            var field = tag + 8
            var frames: UInt64?
            if flags & 1 != 0 {
                frames = UInt64(frame.uint32(bigEndianAt: field))
                field += 4
            }
            let streamBytes =
                flags & 2 != 0 && frame.count >= field + 4 ? UInt64(frame.uint32(bigEndianAt: field)) : nil
            return (true, frames, streamBytes)
        }
        // VBRI: always 32 bytes after the header; version, delay, quality, bytes, frames.
        if frame.matches("VBRI", at: 36), frame.count >= 54 {
            return (true, UInt64(frame.uint32(bigEndianAt: 50)), UInt64(frame.uint32(bigEndianAt: 46)))
        }
        return (false, nil, nil)
    }

    /// The frames from `start` to the end of the sound, each header checked;
    /// the sound may be followed by tags (ID3v1, APE, Lyrics3) or zeros.
    private static func countedFrames<Source>(
        _ reader: inout MediaReader<Source>, from start: UInt64, _ first: MPEGAudioFrameHeader, skippingFirst: Bool
    ) throws(MediaError) -> UInt64 {
        var offset = start
        var frames: UInt64 = 0
        // Each round moves at least 24 bytes (the shortest frame) or ends.
        while offset < reader.byteCount {
            let bytes = try reader.bytes(at: offset, count: 4)
            guard let header = MPEGAudioFrameHeader(bytes), first.continues(header) else {
                if try isTrailer(&reader, at: offset) { break }
                throw .damaged(.mp3, "byte \(offset) should begin a frame but does not")
            }
            guard UInt64(header.frameLength) <= reader.remaining(from: offset) else {
                throw .cutShort(.mp3, "its last frame runs past the end of the file")
            }
            frames += 1
            offset += UInt64(header.frameLength)
        }
        return skippingFirst && frames > 0 ? frames - 1 : frames
    }

    /// Whether what follows the last frame is something players ignore.
    private static func isTrailer<Source>(_ reader: inout MediaReader<Source>, at offset: UInt64) throws(MediaError)
        -> Bool
    {
        let rest = try reader.bytes(at: offset, count: MediaReader<Source>.pieceSize)
        if rest.matches("TAG") || rest.matches("APETAGEX") || rest.matches("LYRICSBEGIN") || rest.matches("ID3") {
            return true
        }
        return UInt64(rest.count) == reader.remaining(from: offset) && rest.allSatisfy { $0 == 0 }
    }
}
