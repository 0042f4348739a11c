import StoryCore

extension MediaProbe {
    // MARK: - WAV

    /// A WAV's duration, its data chunk's length over its format's byte rate,
    /// once the data chunk is inside the file.
    ///
    /// The RIFF size is not checked: recorders that stream often leave it
    /// wrong, and players ignore it. Cost: one read a chunk before the data.
    static func probeWAV<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        var offset: UInt64 = 12
        var byteRate: UInt64?
        // Each round moves at least 8 bytes (an empty chunk) or ends.
        while true {
            let chunk = try reader.bytes(at: offset, count: 8)
            guard chunk.count == 8 else { throw .cutShort(.wav, "it ends before its sound (data chunk)") }
            let name = chunk.fourCC(at: 0)
            let size = UInt64(chunk.uint32(littleEndianAt: 4))
            let room = reader.remaining(from: offset + 8)
            switch name {
            case "fmt ":
                guard size >= 16 else { throw .damaged(.wav, "its format (fmt chunk) is too short") }
                guard size <= room else { throw .cutShort(.wav, "it ends inside its format (fmt chunk)") }
                byteRate = try wavByteRate(try reader.bytes(at: offset + 8, count: Int(min(size, 40))))
            case "data":
                guard let byteRate else {
                    throw .damaged(.wav, "its sound (data chunk) comes before its format (fmt chunk)")
                }
                guard size <= room else {
                    throw .cutShort(.wav, "its data chunk claims \(size) bytes but the file ends \(room) bytes into it")
                }
                return try sound(.wav, duration: Double(size) / Double(byteRate))
            default:
                guard size <= room else {
                    throw .cutShort(
                        .wav, "\(name.chunkLabel("chunk", at: offset)) runs past the end of the file, before its sound")
                }
            }
            offset += 8 + size + (size & 1)
        }
    }

    /// The bytes a second of a WAV format chunk, once its numbers agree;
    /// uncompressed (PCM or floating point) sound only, as browsers play.
    private static func wavByteRate(_ format: [UInt8]) throws(MediaError) -> UInt64 {
        var code = format.uint16(littleEndianAt: 0)
        // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
        if code == 0xFFFE {
            guard format.count >= 26 else { throw .damaged(.wav, "its extended format (fmt chunk) is too short") }
            code = format.uint16(littleEndianAt: 24)
        }
        guard code == 1 || code == 3 else {
            throw .unrecognized(
                looksLike:
                    "a WAV file of compressed sound (format \(code)), which is not supported: only uncompressed WAV is")
        }
        let channels = UInt64(format.uint16(littleEndianAt: 2))
        let sampleRate = UInt64(format.uint32(littleEndianAt: 4))
        let byteRate = UInt64(format.uint32(littleEndianAt: 8))
        let blockAlign = UInt64(format.uint16(littleEndianAt: 12))
        let bitsPerSample = UInt64(format.uint16(littleEndianAt: 14))
        guard channels > 0, sampleRate > 0, bitsPerSample > 0, blockAlign > 0, byteRate == sampleRate * blockAlign
        else {
            throw .damaged(.wav, "its format (fmt chunk) gives numbers that disagree")
        }
        return byteRate
    }

    // MARK: - FLAC

    /// A FLAC's duration from its stream information (STREAMINFO), once its
    /// metadata blocks are inside the file and a frame follows them.
    ///
    /// Cost: one read a metadata block.
    static func probeFLAC<Source>(_ reader: inout MediaReader<Source>, at start: UInt64) throws(MediaError) -> MediaInfo {
        // "fLaC", the first block's header, then the 34 bytes of STREAMINFO.
        let header = try reader.bytes(
            at: start, count: 42, orElse: .cutShort(.flac, "it ends inside its stream information (STREAMINFO)"))
        guard header[4] & 0x7F == 0, header.uint24(bigEndianAt: 5) == 34 else {
            throw .damaged(.flac, "it does not begin with its stream information (STREAMINFO)")
        }
        // Sample rate (20 bits), channels − 1 (3), bits per sample − 1 (5), total samples (36).
        let packed = header.uint64(bigEndianAt: 18)
        let sampleRate = packed >> 44
        let totalSamples = packed & 0xF_FFFF_FFFF
        guard sampleRate > 0, header.uint16(bigEndianAt: 10) >= 16 else {
            throw .damaged(.flac, "its stream information (STREAMINFO) gives impossible numbers")
        }
        guard totalSamples > 0 else {
            throw .damaged(.flac, "its stream information (STREAMINFO) does not say how long it lasts")
        }
        var offset = start + 4
        // Each round moves at least 4 bytes (an empty block) or ends.
        while true {
            let block = try reader.bytes(
                at: offset, count: 4, orElse: .cutShort(.flac, "it ends inside its metadata, before its sound"))
            let length = UInt64(block.uint24(bigEndianAt: 1))
            guard block[0] & 0x7F != 127 else { throw .damaged(.flac, "a metadata block has an invalid type") }
            guard 4 + length <= reader.remaining(from: offset) else {
                throw .cutShort(.flac, "it ends inside its metadata, before its sound")
            }
            offset += 4 + length
            if block[0] & 0x80 != 0 { break }
        }
        // A frame starts with its 14-bit sync code 0b11111111111110 and a reserved 0 bit.
        let frame = try reader.bytes(at: offset, count: 2, orElse: .cutShort(.flac, "it ends before its sound"))
        guard frame[0] == 0xFF, frame[1] & 0xFE == 0xF8 else {
            throw .damaged(.flac, "its sound does not begin with a FLAC frame")
        }
        return try sound(.flac, duration: Double(totalSamples) / Double(sampleRate))
    }
}
