import StoryCore

extension MediaProbe {
    /// The error for a file that is none of the formats Storyteller takes,
    /// saying what it seems to be so that the user knows what to convert.
    static func unrecognized(_ head: [UInt8]) -> MediaError {
        if let looksLike = knownFormat(head) ?? textKind(head) { return .unrecognized(looksLike: looksLike) }
        return MediaError(
            .unrecognized,
            "the file is not an image or sound Storyteller takes (\(MediaError.acceptedFormats)): "
                + "its first bytes match none of them")
    }

    /// Formats people often try instead, by their signature.
    private static func knownFormat(_ head: [UInt8]) -> String? {
        let signatures: [(bytes: [UInt8], looksLike: String)] = [
            (Array("GIF87a".utf8), "a GIF image, which is not supported (PNG is)"),
            (Array("GIF89a".utf8), "a GIF image, which is not supported (PNG is)"),
            ([0x49, 0x49, 0x2A, 0x00], "a TIFF image, which is not supported (PNG and JPEG are)"),
            ([0x4D, 0x4D, 0x00, 0x2A], "a TIFF image, which is not supported (PNG and JPEG are)"),
            (Array("8BPS".utf8), "a Photoshop document, which is not supported: export it as PNG"),
            (Array("%PDF-".utf8), "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive (or a document stored as one)"),
            ([0x50, 0x4B, 0x05, 0x06], "an empty ZIP archive"),
            ([0x1F, 0x8B], "a gzip-compressed file"),
            ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "a 7-Zip archive"),
            (Array("Rar!".utf8), "a RAR archive"),
            ([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1], "an old Microsoft Office document"),
            (Array("{\\rtf".utf8), "an RTF document"),
            ([0x7F, 0x45, 0x4C, 0x46], "a program"),
            ([0x1A, 0x45, 0xDF, 0xA3], "a WebM or Matroska file, which is not supported"),
            ([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11], "a Windows Media file, which is not supported"),
            (Array("MThd".utf8), "a MIDI file, which holds notes rather than sound"),
            (Array("caff".utf8), "a Core Audio (CAF) sound, which is not supported"),
            (Array("#!AMR".utf8), "an AMR voice recording, which is not supported"),
            (Array("RF64".utf8), "a 64-bit WAV (RF64) sound, which is not supported"),
        ]
        if let match = signatures.first(where: { head.starts(with: $0.bytes) }) { return match.looksLike }
        if head.matches("RIFF") && head.matches("AVI ", at: 8) { return "an AVI video, which is not supported" }
        if head.matches("RIFF") { return "a RIFF file of a kind Storyteller does not take" }
        if head.matches("FORM") && (head.matches("AIFF", at: 8) || head.matches("AIFC", at: 8)) {
            return "an AIFF sound, which is not supported (WAV is)"
        }
        // BMP: "BM", then the file size and four reserved zero bytes.
        if head.matches("BM") && head.count >= 14 && head[6..<10].allSatisfy({ $0 == 0 }) {
            return "a BMP image, which is not supported (PNG is)"
        }
        switch MPEGAudioFrameHeader.layer(of: head) {
        case 0: return "raw AAC sound (ADTS) outside an M4A file, which is not supported"
        case 1: return "an MPEG audio layer I (MP1) sound, which is not supported (MP3 is)"
        case 2: return "an MPEG audio layer II (MP2) sound, which is not supported (MP3 is)"
        default: return nil
        }
    }

    /// "text", "an HTML web page"… when the first bytes are text.
    private static func textKind(_ head: [UInt8]) -> String? {
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) { return "text" }
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let text = decodedText(bytes) else { return nil }
        let start = text.drop(while: { $0.isWhitespace }).prefix(256).lowercased()
        if start.hasPrefix("<!doctype html") || start.hasPrefix("<html") || start.contains("<head")
            || start.contains("<body")
        {
            return "an HTML web page"
        }
        if start.contains("<svg") { return "an SVG drawing, which is not supported: export it as PNG" }
        if start.hasPrefix("<?xml") { return "an XML document" }
        return "text"
    }

    /// The bytes as text when they are UTF-8 without control characters other
    /// than white space; the last character may be cut by the 512-byte head.
    private static func decodedText(_ bytes: ArraySlice<UInt8>) -> String? {
        for cut in 0...min(3, bytes.count) {
            let whole = bytes.dropLast(cut)
            guard !whole.isEmpty, let text = String(validating: whole, as: UTF8.self) else { continue }
            let isText = text.unicodeScalars.allSatisfy { scalar in
                scalar.value >= 0x20 && scalar.value != 0x7F || [0x09, 0x0A, 0x0C, 0x0D].contains(scalar.value)
            }
            return isText ? text : nil
        }
        return nil
    }
}
