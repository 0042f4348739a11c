import StoryCore

/// A box of an ISO base media file (MP4, M4A): where it is and what it is.
struct MPEG4Box {
    /// Its four-character type ("moov").
    var type: String
    var start: UInt64
    /// Where its contents start: after the 8- or 16-byte header.
    var contentStart: UInt64
    /// Just past its last byte.
    var end: UInt64
}

extension MediaProbe {
    /// Brands of MPEG-4 files that can hold plain AAC sound.
    private static let audioBrands: Set<String> = [
        "M4A ", "M4B ", "mp41", "mp42", "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "dash", "MSNV",
    ]

    /// What a file with an `ftyp` box is when its brands say it is not sound
    /// ("a HEIC image…"); nil when it may be an M4A, which `probeM4A` checks.
    static func mpeg4NonAudioKind(_ head: [UInt8]) -> String? {
        let size = Int(head.uint32(bigEndianAt: 0))
        // Major brand, minor version, then compatible brands to the box's end.
        var brands = [head.fourCC(at: 8)]
        var index = 16
        while index + 4 <= min(size, head.count) {
            brands.append(head.fourCC(at: index))
            index += 4
        }
        if brands.contains(where: audioBrands.contains) { return nil }
        let major = brands[0]
        if ["heic", "heix", "hevc", "heim", "heis", "mif1", "msf1"].contains(major) {
            return "a HEIC photo, which is not supported (JPEG and PNG are)"
        }
        if ["avif", "avis"].contains(major) { return "an AVIF image, which is not supported (PNG and WebP are)" }
        if major == "qt  " { return "a QuickTime movie, which is not supported" }
        if major.hasPrefix("M4V") { return "an MPEG-4 video, which is not supported" }
        if major.hasPrefix("3g") { return "a 3GP video or recording, which is not supported" }
        if major == "crx " { return "a camera raw photo, which is not supported" }
        let brand = major.chunkLabel("brand", at: 8)
        return "an MPEG-4 file of a kind Storyteller does not take" + (brand.hasPrefix("its ") ? " (\(brand))" : "")
    }

    /// An M4A's duration from its movie header (mvhd, versions 0 and 1), once
    /// every top-level box is inside the file, the index (moov) and the sound
    /// data (mdat) are there, and a track is AAC sound (handler "soun",
    /// sample entry "mp4a").
    ///
    /// Cost: one read a box header on the paths walked (no sample tables).
    static func probeM4A<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        var offset: UInt64 = 0
        var movie: MPEG4Box?
        var hasData = false
        // Each round moves at least 8 bytes (an empty box) or ends.
        while let box = try mpeg4Box(&reader, at: offset, in: reader.byteCount) {
            switch box.type {
            case "moov" where movie == nil: movie = box
            case "moov": throw .damaged(.m4a, "it holds two indexes (moov boxes)")
            case "mdat": hasData = true
            default: break
            }
            offset = box.end
        }
        guard let movie else { throw .cutShort(.m4a, "it ends before its index (moov box)") }
        guard hasData else { throw .damaged(.m4a, "it holds no sound data (mdat box)") }

        var timing: (timescale: UInt64, duration: UInt64)?
        var fragmentDuration: UInt64?
        var soundTracks = 0
        var hasVideo = false
        offset = movie.contentStart
        // Each round moves at least 8 bytes or ends.
        while let box = try mpeg4Box(&reader, at: offset, in: movie.end) {
            switch box.type {
            case "mvhd": timing = try movieTiming(&reader, box)
            case "mvex":
                if let header = try mpeg4Child("mehd", of: box, &reader) {
                    fragmentDuration = try versionedValue(&reader, header, at: (4, 4), "movie extends (mehd)")
                }
            case "trak":
                switch try trackHandler(&reader, box) {
                case "soun":
                    try checkSoundTrackCodec(&reader, box)
                    soundTracks += 1
                case "vide": hasVideo = true
                default: break
                }
            default: break
            }
            offset = box.end
        }
        guard soundTracks > 0 else {
            throw .unrecognized(looksLike: hasVideo ? "an MP4 video without sound" : "an MPEG-4 file without sound")
        }
        guard let timing else { throw .damaged(.m4a, "its index has no movie header (mvhd)") }
        // A fragmented file (as browsers record) may give its length in mehd instead.
        let units = timing.duration != 0 && timing.duration != UInt64.max ? timing.duration : fragmentDuration ?? 0
        guard units > 0 else { throw .damaged(.m4a, "it does not say how long it lasts") }
        return try sound(.m4a, duration: Double(units) / Double(timing.timescale))
    }

    /// The box at `offset` inside a parent ending at `end` (the file's end for
    /// top-level boxes), or nil at `end`.
    /// - Throws: `.truncated` when it runs past the file's end, `.malformed`
    ///   when it runs past its parent's or claims a size smaller than its header.
    static func mpeg4Box<Source>(
        _ reader: inout MediaReader<Source>, at offset: UInt64, in end: UInt64
    ) throws(MediaError) -> MPEG4Box? {
        guard offset < end else { return nil }
        let isTopLevel = end == reader.byteCount
        let header = try reader.bytes(at: offset, count: Int(min(16, end - offset)))
        guard header.count >= 8 else {
            if isTopLevel { throw .cutShort(.m4a, "it ends inside a box header") }
            throw .damaged(.m4a, "a box at byte \(offset) is cut by the box that holds it")
        }
        let type = header.fourCC(at: 4)
        let label = { type.chunkLabel("box", at: offset) }
        var headerLength: UInt64 = 8
        var size = UInt64(header.uint32(bigEndianAt: 0))
        if size == 1 {
            // A 64-bit size follows the type.
            guard header.count == 16 else { throw .damaged(.m4a, "\(label()) has a cut header") }
            size = header.uint64(bigEndianAt: 8)
            headerLength = 16
        } else if size == 0 {
            size = end - offset  // "to the end of the file"
        }
        guard size >= headerLength else { throw .damaged(.m4a, "\(label()) claims an impossible size") }
        guard size <= end - offset else {
            if isTopLevel { throw .cutShort(.m4a, "\(label()) runs past the end of the file") }
            throw .damaged(.m4a, "\(label()) runs past the end of the box that holds it")
        }
        return MPEG4Box(type: type, start: offset, contentStart: offset + headerLength, end: offset + size)
    }

    /// The first child of `parent` of that type. Cost: one read a child before it.
    private static func mpeg4Child<Source>(
        _ type: String, of parent: MPEG4Box, _ reader: inout MediaReader<Source>
    ) throws(MediaError) -> MPEG4Box? {
        var offset = parent.contentStart
        // Each round moves at least 8 bytes or ends.
        while let box = try mpeg4Box(&reader, at: offset, in: parent.end) {
            if box.type == type { return box }
            offset = box.end
        }
        return nil
    }

    /// The movie header's time scale (units a second) and duration in those units.
    private static func movieTiming<Source>(
        _ reader: inout MediaReader<Source>, _ header: MPEG4Box
    ) throws(MediaError) -> (timescale: UInt64, duration: UInt64) {
        // Version 0: 4-byte creation and modification times, time scale, 4-byte duration; version 1: 8-byte ones.
        let duration = try versionedValue(&reader, header, at: (16, 24), "movie header (mvhd)")
        let version = try reader.bytes(at: header.contentStart, count: 1)
        let timescaleOffset: UInt64 = version.first == 1 ? 20 : 12
        let timescale = try reader.bytes(at: header.contentStart + timescaleOffset, count: 4)
        guard timescale.count == 4, timescale.uint32(bigEndianAt: 0) > 0 else {
            throw .damaged(.m4a, "its movie header (mvhd) gives no time scale")
        }
        return (UInt64(timescale.uint32(bigEndianAt: 0)), duration)
    }

    /// A full box's field that is 4 bytes at `offsets.0` in version 0 and 8
    /// bytes at `offsets.1` in version 1, read within the box.
    private static func versionedValue<Source>(
        _ reader: inout MediaReader<Source>, _ box: MPEG4Box, at offsets: (UInt64, UInt64), _ what: String
    ) throws(MediaError) -> UInt64 {
        let version = try reader.bytes(at: box.contentStart, count: 1).first
        guard version == 0 || version == 1 else { throw .damaged(.m4a, "its \(what) has an unknown version") }
        let (offset, width) = version == 1 ? (offsets.1, 8) : (offsets.0, 4)
        guard box.contentStart + offset + UInt64(width) <= box.end else {
            throw .damaged(.m4a, "its \(what) is too short")
        }
        let bytes = try reader.bytes(at: box.contentStart + offset, count: width)
        guard bytes.count == width else { throw .damaged(.m4a, "its \(what) is too short") }
        return width == 8 ? bytes.uint64(bigEndianAt: 0) : UInt64(bytes.uint32(bigEndianAt: 0))
    }

    /// A track's handler type ("soun", "vide"…) from trak/mdia/hdlr, or nil.
    private static func trackHandler<Source>(
        _ reader: inout MediaReader<Source>, _ track: MPEG4Box
    ) throws(MediaError) -> String? {
        guard let media = try mpeg4Child("mdia", of: track, &reader),
            let handler = try mpeg4Child("hdlr", of: media, &reader)
        else { return nil }
        // Version and flags, pre-defined, then the handler type.
        guard handler.contentStart + 12 <= handler.end else {
            throw .damaged(.m4a, "a track's handler (hdlr) is too short")
        }
        return try reader.bytes(at: handler.contentStart + 8, count: 4).fourCC(at: 0)
    }

    /// Throws unless a sound track holds AAC (sample entry "mp4a"), the sound an M4A is for.
    private static func checkSoundTrackCodec<Source>(
        _ reader: inout MediaReader<Source>, _ track: MPEG4Box
    ) throws(MediaError) {
        guard let media = try mpeg4Child("mdia", of: track, &reader),
            let information = try mpeg4Child("minf", of: media, &reader),
            let table = try mpeg4Child("stbl", of: information, &reader),
            let descriptions = try mpeg4Child("stsd", of: table, &reader)
        else { throw .damaged(.m4a, "its sound track has no sample description (stsd)") }
        // Version and flags, entry count, then the first entry's size and format.
        guard descriptions.contentStart + 16 <= descriptions.end else {
            throw .damaged(.m4a, "its sound track's sample description (stsd) is too short")
        }
        let format = try reader.bytes(at: descriptions.contentStart + 12, count: 4).fourCC(at: 0)
        switch format {
        case "mp4a": return
        case "alac": throw .unrecognized(looksLike: "an Apple Lossless (ALAC) sound, which is not supported (AAC is)")
        default:
            throw .unrecognized(
                looksLike: "an MPEG-4 sound coded as \(format.trimmingSuffixSpaces), which is not supported (AAC is)")
        }
    }
}
