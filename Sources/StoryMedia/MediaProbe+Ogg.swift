import StoryCore

extension MediaProbe {
    /// How an Ogg stream's granule positions count time.
    private enum OggCodec {
        /// Opus: 48 000 a second, the first `preSkip` of them not played.
        case opus(preSkip: UInt64)
        /// Vorbis: samples at the identification header's rate.
        case vorbis(sampleRate: UInt64)

        func duration(atGranule granule: UInt64) -> Double {
            switch self {
            case .opus(let preSkip): Double(granule > preSkip ? granule - preSkip : 0) / 48_000
            case .vorbis(let sampleRate): Double(granule) / Double(sampleRate)
            }
        }
    }

    /// One logical stream of an Ogg file; chained files hold several, one after another.
    private struct OggStream {
        var serial: UInt32
        var codec: OggCodec
        var lastGranule: UInt64 = 0
        var hasEnded = false
        var duration: Double { codec.duration(atGranule: lastGranule) }
    }

    /// An Ogg Opus or Vorbis sound's duration from the granule position of its
    /// last page, once every page is inside the file, matches its CRC and
    /// belongs to the stream, and the last page carries the end-of-stream flag.
    ///
    /// Cost: reads the whole file once, a page (under 64 KiB) at a time.
    static func probeOgg<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        var offset: UInt64 = 0
        var stream: OggStream?
        var earlierDuration = 0.0
        // Each round moves at least 27 bytes (an empty page) or ends.
        while offset < reader.byteCount {
            let page = try oggPage(&reader, at: offset)
            let flags = page[5]
            let granule = page.uint64(littleEndianAt: 6)
            let serial = page.uint32(littleEndianAt: 14)
            if flags & 0x02 != 0 {
                if let ended = stream {
                    // A chained stream starts only after the one before ended; at the same time it is multiplexed.
                    guard ended.hasEnded else {
                        throw .unrecognized(looksLike: "an Ogg file holding several streams at once, such as a video")
                    }
                    earlierDuration += ended.duration
                }
                stream = OggStream(serial: serial, codec: try oggCodec(firstPacket(of: page)))
            } else {
                guard let current = stream else { throw .damaged(.ogg, "it does not begin with a stream's first page") }
                guard serial == current.serial else {
                    throw .damaged(.ogg, "a page at byte \(offset) belongs to no stream the file started")
                }
                guard !current.hasEnded else { throw .damaged(.ogg, "pages follow the end of its stream") }
            }
            // −1 marks a page on which no packet ends; other negative positions are invalid.
            if granule != UInt64.max {
                guard granule < 1 << 63 else { throw .damaged(.ogg, "a page gives an impossible position") }
                stream?.lastGranule = granule
            }
            if flags & 0x04 != 0 { stream?.hasEnded = true }
            offset += UInt64(page.count)
        }
        guard let stream, stream.hasEnded else {
            throw .cutShort(.ogg, "it ends without its last page (the end-of-stream mark is missing)")
        }
        return try sound(.ogg, duration: earlierDuration + stream.duration)
    }

    /// The page at `offset` (header, segment table and body: at most 65 307
    /// bytes), once it fits in the file and matches its checksum.
    private static func oggPage<Source>(_ reader: inout MediaReader<Source>, at offset: UInt64) throws(MediaError)
        -> [UInt8]
    {
        let header = try reader.bytes(at: offset, count: 27 + 255)
        guard header.count >= 27, header.count >= 27 + Int(header[26]) else {
            throw .cutShort(.ogg, "its last page runs past the end of the file")
        }
        guard header.matches("OggS") else { throw .damaged(.ogg, "byte \(offset) should begin a page but does not") }
        guard header[4] == 0 else { throw .damaged(.ogg, "a page has an unknown version") }
        let segments = Int(header[26])
        let pageLength = 27 + segments + header[27..<27 + segments].reduce(0) { $0 + Int($1) }
        var page = try reader.bytes(
            at: offset, count: pageLength, orElse: .cutShort(.ogg, "its last page runs past the end of the file"))
        let stored = page.uint32(littleEndianAt: 22)
        page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        guard OggCRC32.checksum(page) == stored else {
            throw .damaged(.ogg, "a page at byte \(offset) fails its checksum (CRC)")
        }
        return page
    }

    /// The first packet of a stream's first page: its identification header.
    private static func firstPacket(of page: [UInt8]) -> [UInt8] {
        let segments = Int(page[26])
        // A packet is the run of lacing values up to and including the first below 255.
        var length = 0
        for lacing in page[27..<27 + segments] {
            length += Int(lacing)
            if lacing < 255 { break }
        }
        let start = 27 + segments
        return Array(page[start..<start + length])
    }

    /// The codec a stream's identification header names: Opus or Vorbis,
    /// whose headers must be valid; anything else is not a sound Storyteller takes.
    private static func oggCodec(_ packet: [UInt8]) throws(MediaError) -> OggCodec {
        if packet.matches("OpusHead") {
            // Version (major 0), channels, pre-skip, input rate, gain, channel mapping.
            guard packet.count >= 19, packet[8] & 0xF0 == 0, packet[9] > 0 else {
                throw .damaged(.ogg, "its Opus header is invalid")
            }
            return .opus(preSkip: UInt64(packet.uint16(littleEndianAt: 10)))
        }
        if packet.starts(with: [0x01] + Array("vorbis".utf8)) {
            // Version 0, channels, sample rate, three bitrates, block sizes, framing bit.
            guard packet.count >= 30, packet.uint32(littleEndianAt: 7) == 0, packet[11] > 0,
                packet.uint32(littleEndianAt: 12) > 0, packet[29] & 1 == 1
            else { throw .damaged(.ogg, "its Vorbis header is invalid") }
            return .vorbis(sampleRate: UInt64(packet.uint32(littleEndianAt: 12)))
        }
        if packet.starts(with: [0x80] + Array("theora".utf8)) {
            throw .unrecognized(looksLike: "an Ogg video (Theora)")
        }
        if packet.starts(with: [0x7F] + Array("FLAC".utf8)) {
            throw .unrecognized(looksLike: "FLAC sound inside an Ogg file, which is not supported (plain FLAC is)")
        }
        if packet.matches("Speex   ") {
            throw .unrecognized(looksLike: "a Speex voice recording, which is not supported")
        }
        throw .unrecognized(looksLike: "an Ogg file holding neither Opus nor Vorbis sound")
    }
}
