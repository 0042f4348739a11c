import StoryCore

/// How a JPEG's pixels are to be turned to be seen upright: the EXIF
/// `Orientation` tag (0x0112) of its APP1 segment, as phones and cameras
/// write it instead of turning the pixels. 1 is upright; 2–8 are the
/// mirrorings and quarter turns of the EXIF specification; 5–8 swap width
/// and height.
package enum JPEGOrientation {
    /// The orientation an APP1 segment's payload (after its length) gives,
    /// 1 when it is not EXIF, has no orientation, or says something else
    /// than 1–8. Reads only within `payload`.
    package static func orientation(inAPP1 payload: some Collection<UInt8>) -> Int {
        let bytes = Array(payload)
        guard bytes.count >= 14, bytes[0..<6].elementsEqual(Array("Exif".utf8) + [0, 0]) else { return 1 }
        let tiff = 6
        let bigEndian: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return 1
        }
        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            let (a, b) = (Int(bytes[at]), Int(bytes[at + 1]))
            return bigEndian ? a << 8 | b : b << 8 | a
        }
        func read32(_ at: Int) -> Int? {
            guard let high = read16(bigEndian ? at : at + 2), let low = read16(bigEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard read16(tiff + 2) == 42, let ifd = read32(tiff + 4), let count = read16(tiff + ifd) else { return 1 }
        // At most the entries that fit in the segment (12 bytes each).
        for index in 0..<min(count, (bytes.count - tiff) / 12) {
            let entry = tiff + ifd + 2 + index * 12
            guard let tag = read16(entry) else { return 1 }
            guard tag == 0x0112 else { continue }
            // A SHORT (type 3), count 1: the value sits in the first two bytes of the value field.
            guard read16(entry + 2) == 3, let value = read16(entry + 8), (1...8).contains(value) else { return 1 }
            return value
        }
        return 1
    }

    /// Whether an orientation turns the picture a quarter (width and height swap).
    package static func swapsSides(_ orientation: Int) -> Bool { (5...8).contains(orientation) }

    /// The orientation a whole JPEG file gives: its APP1 segments before the
    /// picture data are read (1 when there is none, or the bytes are not a JPEG).
    package static func orientation(ofJPEG file: UnsafeRawBufferPointer) -> Int {
        guard file.count >= 4, file[0] == 0xFF, file[1] == 0xD8 else { return 1 }
        var offset = 2
        while offset + 4 <= file.count, file[offset] == 0xFF {
            let code = file[offset + 1]
            if code == 0xFF {
                offset += 1
                continue
            }
            if code == 0xDA || code == 0xD9 { return 1 }  // the picture data: no EXIF came before it
            let length = Int(file[offset + 2]) << 8 | Int(file[offset + 3])
            guard length >= 2, offset + 2 + length <= file.count else { return 1 }
            if code == 0xE1 {
                let found = orientation(inAPP1: file[(offset + 4)..<(offset + 2 + length)])
                if found != 1 { return found }
            }
            offset += 2 + length
        }
        return 1
    }
}
