import StoryCore

extension MediaProbe {
    // MARK: - PNG

    /// A PNG's size from its header (IHDR), once every chunk up to IEND is
    /// inside the file and matches its CRC-32.
    ///
    /// Cost: reads the whole file once (the checksums cover every byte).
    static func probePNG<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        // The signature, then IHDR: length, name, 13 bytes of data, CRC.
        let header = try reader.bytes(at: 0, count: 33, orElse: .cutShort(.png, "it ends inside its header (IHDR)"))
        guard header.uint32(bigEndianAt: 8) == 13, header.matches("IHDR", at: 12) else {
            throw .damaged(.png, "it does not begin with its header chunk (IHDR)")
        }
        let info = try image(
            .png, width: UInt64(header.uint32(bigEndianAt: 16)), height: UInt64(header.uint32(bigEndianAt: 20)))
        let (bitDepth, colorType) = (header[24], header[25])
        let bitDepths: [UInt8: [UInt8]] = [
            0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
        ]
        guard bitDepths[colorType]?.contains(bitDepth) == true, header[26] == 0, header[27] == 0, header[28] <= 1 else {
            throw .damaged(.png, "its header (IHDR) describes pixels PNG does not have")
        }
        var offset: UInt64 = 8
        var hasPalette = false
        var hasPixels = false
        // Each round moves at least 12 bytes (an empty chunk) or ends.
        while true {
            let chunk = try reader.bytes(at: offset, count: 8)
            guard chunk.count == 8 else { throw .cutShort(.png, "it ends before its last chunk (IEND)") }
            let length = UInt64(chunk.uint32(bigEndianAt: 0))
            let name = chunk.fourCC(at: 4)
            guard chunk[4..<8].allSatisfy(isASCIILetter) else {
                throw .damaged(.png, "byte \(offset) should begin a chunk but does not")
            }
            guard length < 1 << 31 else { throw .damaged(.png, "its \(name) chunk claims an impossible length") }
            guard 12 + length <= reader.remaining(from: offset) else {
                if name == "IEND" { throw .cutShort(.png, "it ends inside its last chunk (IEND)") }
                throw .cutShort(.png, "its \(name) chunk runs past the end of the file, before its last chunk (IEND)")
            }
            var crc = CRC32()
            crc.update(Array(chunk[4..<8]))
            try reader.forEachPiece(at: offset + 8, count: length) { crc.update($0) }
            let stored = try reader.bytes(at: offset + 8 + length, count: 4)
            guard stored.count == 4, stored.uint32(bigEndianAt: 0) == crc.checksum else {
                throw .damaged(.png, "its \(name) chunk fails its checksum (CRC)")
            }
            switch name {
            case "IHDR" where offset != 8: throw .damaged(.png, "it has a second header chunk (IHDR)")
            case "PLTE": hasPalette = true
            case "IDAT":
                if colorType == 3 && !hasPalette {
                    throw .damaged(.png, "its pixels refer to a palette (PLTE) it does not have")
                }
                hasPixels = true
            case "IEND":
                guard hasPixels else { throw .damaged(.png, "it holds no pixels (IDAT chunk)") }
                return info
            default: break
            }
            offset += 12 + length
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    // MARK: - JPEG

    /// A JPEG's size from its frame header (SOFn), once its segments are
    /// walked to the end marker (EOI) through the compressed picture data.
    ///
    /// Bytes after EOI are allowed: cameras append previews and phones
    /// "motion photo" videos there, and every decoder ignores them.
    /// Cost: reads the whole file once.
    static func probeJPEG<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        var offset: UInt64 = 2
        var info: MediaInfo?
        var orientation = 1
        // Each round moves at least one byte forward or ends.
        while true {
            let marker = try reader.bytes(at: offset, count: 4)
            guard marker.count >= 2 else { throw .cutShort(.jpeg, "it ends before its end marker (EOI)") }
            guard marker[0] == 0xFF else { throw .damaged(.jpeg, "byte \(offset) should begin a marker but does not") }
            switch marker[1] {
            case 0xFF:
                offset += 1  // fill byte before a marker
            case 0xD9:
                guard var info else { throw .damaged(.jpeg, "it ends before its frame header (SOF)") }
                // The size it is seen at: a photo a phone took sideways says so in EXIF.
                if JPEGOrientation.swapsSides(orientation) { (info.pixelWidth, info.pixelHeight) = (info.pixelHeight, info.pixelWidth) }
                return info
            case 0xD8:
                throw .damaged(.jpeg, "it starts a second picture inside the first")
            case 0x01, 0xD0...0xD7:
                offset += 2  // markers without a segment
            case let code:
                guard marker.count == 4 else { throw .cutShort(.jpeg, "it ends before its end marker (EOI)") }
                let length = UInt64(marker.uint16(bigEndianAt: 2))
                guard length >= 2 else {
                    throw .damaged(.jpeg, "a segment at byte \(offset) claims an impossible length")
                }
                guard 2 + length <= reader.remaining(from: offset) else {
                    throw .cutShort(.jpeg, "it ends inside a segment, before its end marker (EOI)")
                }
                if code == 0xE1, orientation == 1, info == nil {
                    orientation = JPEGOrientation.orientation(inAPP1: try reader.bytes(at: offset + 4, count: Int(min(length - 2, 65_533))))
                }
                if isStartOfFrame(code) && info == nil {
                    let frame = try reader.bytes(at: offset + 4, count: Int(min(length - 2, 6)))
                    guard frame.count == 6 else { throw .damaged(.jpeg, "its frame header (SOF) is too short") }
                    let (height, width) = (UInt64(frame.uint16(bigEndianAt: 1)), UInt64(frame.uint16(bigEndianAt: 3)))
                    info = try image(.jpeg, width: width, height: height)
                }
                offset += 2 + length
                if code == 0xDA {
                    guard info != nil else {
                        throw .damaged(.jpeg, "its picture data comes before its frame header (SOF)")
                    }
                    offset = try offsetAfterEntropyCodedData(&reader, from: offset)
                }
            }
        }
    }

    /// SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range.
    private static func isStartOfFrame(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }

    /// The offset of the marker ending a scan's compressed data, in which 0xFF
    /// is only ever followed by 0x00 (a stuffed byte), a restart marker or fill.
    private static func offsetAfterEntropyCodedData<Source>(
        _ reader: inout MediaReader<Source>, from start: UInt64
    ) throws(MediaError) -> UInt64 {
        var offset = start
        // Each round moves at least one byte forward (see `scanned`) or ends.
        while true {
            let piece = try reader.bytes(at: offset, count: MediaReader<Source>.pieceSize)
            guard piece.count >= 2 else { throw .cutShort(.jpeg, "it ends before its end marker (EOI)") }
            var scanned = 0
            while scanned + 1 < piece.count {
                guard let byte = piece[scanned..<piece.count - 1].firstIndex(of: 0xFF) else {
                    scanned = piece.count - 1
                    break
                }
                let next = piece[byte + 1]
                if next == 0x00 || next == 0xFF || (0xD0...0xD7).contains(next) {
                    scanned = byte + 1
                } else {
                    return offset + UInt64(byte)
                }
            }
            // A 0xFF last in the piece is looked at again with the byte after it.
            offset += UInt64(max(scanned, 1))
        }
    }

    // MARK: - WebP

    /// A WebP's size from its first chunk (VP8, VP8L or VP8X), once its RIFF
    /// size fits the file and its chunks fit the RIFF size.
    ///
    /// Bytes after the RIFF size are allowed, as libwebp allows them.
    /// Cost: one read a chunk.
    static func probeWebP<Source>(_ reader: inout MediaReader<Source>) throws(MediaError) -> MediaInfo {
        let header = try reader.bytes(at: 0, count: 12)
        let riffEnd = 8 + UInt64(header.uint32(littleEndianAt: 4))
        guard riffEnd <= reader.byteCount else {
            throw .cutShort(.webp, "its header announces \(riffEnd) bytes but the file holds \(reader.byteCount)")
        }
        var offset: UInt64 = 12
        var info: MediaInfo?
        var hasPicture = false
        // Each round moves at least 8 bytes (an empty chunk) or ends.
        while offset + 8 <= riffEnd {
            let chunk = try reader.bytes(at: offset, count: 8)
            let name = chunk.fourCC(at: 0)
            let size = UInt64(chunk.uint32(littleEndianAt: 4))
            guard size <= riffEnd - offset - 8 else {
                throw .damaged(.webp, "\(name.chunkLabel("chunk", at: offset)) runs past the end its header announces")
            }
            if info == nil {
                let data = try reader.bytes(at: offset + 8, count: Int(min(size, 10)))
                info = try webPFirstChunk(name, data)
            }
            if ["VP8 ", "VP8L", "ANMF"].contains(name) { hasPicture = true }
            offset += 8 + size + (size & 1)
        }
        guard let info else { throw .damaged(.webp, "it holds no picture") }
        guard hasPicture else { throw .damaged(.webp, "it holds no picture data") }
        return info
    }

    /// The size a WebP's first chunk gives: VP8 (lossy), VP8L (lossless) or
    /// VP8X (extended: the canvas of a picture with alpha, metadata or animation).
    private static func webPFirstChunk(_ name: String, _ data: [UInt8]) throws(MediaError) -> MediaInfo {
        switch name {
        case "VP8 ":
            // Frame tag (3 bytes, bit 0 clear on a key frame), start code 9D 01 2A, 14-bit sizes.
            guard data.count == 10, data[0] & 1 == 0, data[3] == 0x9D, data[4] == 0x01, data[5] == 0x2A else {
                throw .damaged(.webp, "its lossy picture (VP8) has no valid header")
            }
            return try image(
                .webp, width: UInt64(data.uint16(littleEndianAt: 6) & 0x3FFF),
                height: UInt64(data.uint16(littleEndianAt: 8) & 0x3FFF))
        case "VP8L":
            // Signature 0x2F, then width − 1 and height − 1 in 14 bits each, then a 3-bit version 0.
            guard data.count >= 5, data[0] == 0x2F, data.uint32(littleEndianAt: 1) >> 29 == 0 else {
                throw .damaged(.webp, "its lossless picture (VP8L) has no valid header")
            }
            let bits = data.uint32(littleEndianAt: 1)
            return try image(.webp, width: UInt64(bits & 0x3FFF) + 1, height: UInt64((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            // Flags, 3 reserved bytes, canvas width − 1 and height − 1 in 24 bits each.
            guard data.count == 10 else { throw .damaged(.webp, "its extended header (VP8X) is too short") }
            return try image(
                .webp, width: UInt64(data.uint24(littleEndianAt: 4)) + 1,
                height: UInt64(data.uint24(littleEndianAt: 7)) + 1)
        default:
            throw .damaged(.webp, "it does not begin with a picture (a VP8, VP8L or VP8X chunk)")
        }
    }
}
