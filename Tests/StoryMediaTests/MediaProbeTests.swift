import Foundation
import StoryCore
import StoryTestSupport
import Testing

@testable import StoryMedia

/// Real files made by ffmpeg 5.1 (`Fixtures/media/make-fixtures.sh`), each
/// probed and compared with what `ffprobe` reports, then damaged, cut and
/// forged in the ways uploads go wrong.
@Suite struct MediaProbeTests {
    /// A fixture and what the probe must find in it.
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var info: MediaInfo
        /// How far the duration may be from `info.duration`, in seconds.
        var tolerance: Double = 0
        var testDescription: String { name }
    }

    /// Expected values, each checked against `ffprobe -show_entries format=duration:stream=width,height`.
    static let fixtures: [Fixture] = [
        // ffprobe: width=37 height=23.
        Fixture(name: "image.png", info: MediaInfo(type: .png, pixelWidth: 37, pixelHeight: 23)),
        // ffprobe: width=64 height=48.
        Fixture(name: "image.jpg", info: MediaInfo(type: .jpeg, pixelWidth: 64, pixelHeight: 48)),
        // ffprobe: width=50 height=30 (a "VP8 " chunk).
        Fixture(name: "image-lossy.webp", info: MediaInfo(type: .webp, pixelWidth: 50, pixelHeight: 30)),
        // ffprobe: width=41 height=27 (a "VP8L" chunk).
        Fixture(name: "image-lossless.webp", info: MediaInfo(type: .webp, pixelWidth: 41, pixelHeight: 27)),
        // ffprobe: width=33 height=21 (a "VP8X" chunk, then ALPH and VP8).
        Fixture(name: "image-alpha.webp", info: MediaInfo(type: .webp, pixelWidth: 33, pixelHeight: 21)),
        // ffprobe: duration=0.750000 (12 000 data bytes at 16 000 bytes a second): exact.
        Fixture(name: "sound.wav", info: MediaInfo(type: .wav, duration: 0.75), tolerance: 1e-9),
        // ffprobe: duration=1.567250, which it estimates from the file size and bitrate for a
        // file without a Xing header; `ffprobe -count_packets` counts 60 frames, and the probe,
        // walking them, finds 60 × 576 / 22 050 = 1.567347 s. 1 ms covers ffprobe's estimate.
        Fixture(name: "sound-cbr.mp3", info: MediaInfo(type: .mp3, duration: 60.0 * 576 / 22_050), tolerance: 1e-3),
        // ffprobe: duration=2.063673 = 79 frames (its Xing header; -count_packets: 79) × 576 / 22 050: exact.
        Fixture(name: "sound-vbr.mp3", info: MediaInfo(type: .mp3, duration: 79.0 * 576 / 22_050), tolerance: 1e-9),
        // ffprobe: format duration=1.251000, the movie header's 1251 at time scale 1000: exact.
        Fixture(name: "sound.m4a", info: MediaInfo(type: .m4a, duration: 1.251), tolerance: 1e-9),
        // ffprobe: duration=1.306500 = the last granule 62 712 / 48 000, without subtracting the
        // 312-sample pre-skip that RFC 7845 §4.2 says is not played; the probe subtracts it and
        // finds the 1.3 s that were encoded. Exact.
        Fixture(name: "sound-opus.ogg", info: MediaInfo(type: .ogg, duration: 1.3), tolerance: 1e-9),
        // ffprobe: duration=1.100000 = the last granule 24 255 / 22 050 Hz: exact.
        Fixture(name: "sound-vorbis.ogg", info: MediaInfo(type: .ogg, duration: 1.1), tolerance: 1e-9),
        // ffprobe: duration=0.900000 = 7200 samples (STREAMINFO) / 8000 Hz: exact.
        Fixture(name: "sound.flac", info: MediaInfo(type: .flac, duration: 0.9), tolerance: 1e-9),
    ]

    @Test(arguments: fixtures)
    func realFilesAreRecognizedWithTheirSizeOrDuration(_ fixture: Fixture) throws {
        let info = try MediaProbe.probe(BytesMediaSource(try Self.bytes(fixture.name)))
        #expect(info.type == fixture.info.type)
        #expect(info.pixelWidth == fixture.info.pixelWidth)
        #expect(info.pixelHeight == fixture.info.pixelHeight)
        #expect(abs(info.duration - fixture.info.duration) <= fixture.tolerance, "\(info.duration)")
    }

    // MARK: - Not media

    @Test func anEmptyFileIsRefusedAsEmpty() throws {
        let error = try #require(Self.error(probing: []))
        #expect(error.kind == .truncated)
        #expect(error.message == "the file is empty: it holds no image or sound")
    }

    @Test func textNamedPNGIsRecognizedAsText() throws {
        let error = try #require(Self.error(probing: Array("hello".utf8)))
        #expect(error.kind == .unrecognized)
        #expect(
            error.message
                == "the file is not an image or sound Storyteller takes (PNG, JPEG, WebP, WAV, MP3, M4A, Ogg, FLAC): "
                + "it looks like text")
        #expect(error.description == error.message)
    }

    @Test(arguments: [
        ("<!DOCTYPE html>\n<html><head><title>Not found</title></head></html>", "an HTML web page"),
        ("\u{FEFF}  <html lang=\"en\"><body>x</body></html>", "an HTML web page"),
        ("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "an SVG drawing"),
        ("%PDF-1.7\n%âãÏÓ\n1 0 obj", "a PDF document"),
        ("GIF89a\u{1}\u{0}\u{1}\u{0}", "a GIF image, which is not supported"),
        ("RIFF\u{0}\u{0}\u{0}\u{0}AVI LIST", "an AVI video"),
        ("{\"shots\": [1, 2, 3]}\n", "text"),
    ])
    func otherFilesAreRefusedWithAHintOfWhatTheyAre(_ content: String, _ hint: String) throws {
        let error = try #require(Self.error(probing: Array(content.utf8)))
        #expect(error.kind == .unrecognized)
        #expect(error.message.contains("it looks like \(hint)"), "\(error)")
    }

    @Test(
        arguments: [
            ([0x42, 0x4D, 0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0], "a BMP image, which is not supported"),
            ([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "a TIFF image, which is not supported"),
            ([0x50, 0x4B, 0x03, 0x04, 0x14, 0, 0, 0], "a ZIP archive"),
            ([0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC], "raw AAC sound (ADTS)"),
            ([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81], "a WebM or Matroska file"),
        ] as [([UInt8], String)])
    func binaryFormatsAreRefusedWithAHint(_ bytes: [UInt8], _ hint: String) throws {
        let error = try #require(Self.error(probing: bytes))
        #expect(error.kind == .unrecognized)
        #expect(error.message.contains("it looks like \(hint)"), "\(error)")
    }

    @Test func aVideoWithoutSoundIsRefused() throws {
        let error = try #require(Self.error(probing: try Self.bytes("video.mp4")))
        #expect(error.kind == .unrecognized)
        #expect(error.message.hasSuffix("it looks like an MP4 video without sound"), "\(error)")
    }

    @Test func bytesMatchingNoFormatSaySo() throws {
        let error = try #require(Self.error(probing: [0x00, 0x01, 0x02, 0x03, 0xFE, 0x80, 0x7F, 0x00]))
        #expect(error.kind == .unrecognized)
        #expect(error.message.hasSuffix("its first bytes match none of them"), "\(error)")
    }

    // MARK: - Damaged and cut short

    @Test func aPNGCutInHalfIsTruncated() throws {
        let png = try Self.bytes("image.png")
        let error = try #require(Self.error(probing: Array(png.prefix(png.count / 2))))
        #expect(error.kind == .truncated)
        #expect(error.message.hasPrefix("the PNG image is cut short: "), "\(error)")
        // Cut exactly between chunks, just before IEND: nothing runs past the end, but IEND is missing.
        let beforeEnd = try #require(Self.offset(of: "IEND", in: png)) - 4
        let missingEnd = try #require(Self.error(probing: Array(png.prefix(beforeEnd))))
        #expect(
            missingEnd == MediaError(.truncated, "the PNG image is cut short: it ends before its last chunk (IEND)"))
    }

    @Test func aPNGWithAFlippedByteFailsItsChecksum() throws {
        var png = try Self.bytes("image.png")
        let pixels = try #require(Self.offset(of: "IDAT", in: png)) + 4
        png[pixels + 3] ^= 0x10
        let error = try #require(Self.error(probing: png))
        #expect(error == MediaError(.malformed, "the PNG image is damaged: its IDAT chunk fails its checksum (CRC)"))
    }

    @Test func pngSizesOutsideOneTo65536AreRefused() throws {
        for (width, height) in [(0, 23), (37, 0), (65_537, 10), (1 << 31, 1 << 31)] {
            var png = try Self.bytes("image.png")
            Self.put(bigEndian: UInt32(width), at: 16, in: &png)
            Self.put(bigEndian: UInt32(height), at: 20, in: &png)
            // A forged header comes with a correct checksum: the size itself must be refused.
            Self.put(bigEndian: CRC32.checksum(Array(png[12..<29])), at: 29, in: &png)
            let error = try #require(Self.error(probing: png))
            #expect(error.kind == .malformed, "\(width)×\(height): \(error)")
        }
        var largest = try Self.bytes("image.png")
        Self.put(bigEndian: 65_536, at: 16, in: &largest)
        Self.put(bigEndian: CRC32.checksum(Array(largest[12..<29])), at: 29, in: &largest)
        #expect(try MediaProbe.probe(BytesMediaSource(largest)).pixelWidth == 65_536)
    }

    @Test func aJPEGWithoutItsEndIsTruncated() throws {
        let jpeg = try Self.bytes("image.jpg")
        #expect(jpeg.suffix(2) == [0xFF, 0xD9])
        for length in [jpeg.count / 3, jpeg.count * 2 / 3, jpeg.count - 2, jpeg.count - 1] {
            let error = try #require(Self.error(probing: Array(jpeg.prefix(length))))
            #expect(error.kind == .truncated, "cut at \(length): \(error)")
            #expect(error.message.hasPrefix("the JPEG image is cut short: "))
        }
        // Bytes after the end marker (previews, motion-photo videos) are allowed.
        #expect(try MediaProbe.probe(BytesMediaSource(jpeg + Array(repeating: 0x55, count: 300))).pixelWidth == 64)
    }

    @Test func aWAVWhoseDataChunkClaimsMoreThanTheFileIsTruncated() throws {
        var wav = try Self.bytes("sound.wav")
        let data = try #require(Self.offset(of: "data", in: wav))
        let size = Int(wav[data + 4]) | Int(wav[data + 5]) << 8 | Int(wav[data + 6]) << 16
        #expect(size == 12_000)
        Self.put(littleEndian: UInt32(size + 1000), at: data + 4, in: &wav)
        let error = try #require(Self.error(probing: wav))
        #expect(
            error
                == MediaError(
                    .truncated,
                    "the WAV sound is cut short: its data chunk claims 13000 bytes but the file ends 12000 bytes into it"
                ))
    }

    @Test func aWAVThatWouldLastMoreThanADayIsRefused() throws {
        var wav = try Self.bytes("sound.wav")
        let format = try #require(Self.offset(of: "fmt ", in: wav)) + 8
        let data = try #require(Self.offset(of: "data", in: wav))
        // One byte a second: the 12 000 data bytes last 3⅓ hours, which is fine…
        Self.put(littleEndian: 1, at: format + 4, in: &wav)  // sample rate
        Self.put(littleEndian: 1, at: format + 8, in: &wav)  // byte rate
        wav[format + 12] = 1  // block alignment
        #expect(try MediaProbe.probe(BytesMediaSource(wav)) == MediaInfo(type: .wav, duration: 12_000))
        // …but 100 000 of them last more than a day.
        var header = Array(wav.prefix(data + 8))
        Self.put(littleEndian: 100_000, at: data + 4, in: &header)
        let long = GeneratedSource(prefix: header, byteCount: UInt64(header.count) + 100_000) { _ in 0 }
        let error = try #require(Self.error(probing: long))
        #expect(error.kind == .malformed)
        #expect(error.message.hasPrefix("the WAV sound is too long: it claims to last 27 hours"), "\(error)")
    }

    @Test(arguments: ["sound-opus.ogg", "sound-vorbis.ogg"])
    func anOggCutMidwayIsTruncated(_ name: String) throws {
        let ogg = try Self.bytes(name)
        let cut = try #require(Self.error(probing: Array(ogg.prefix(ogg.count / 2))))
        #expect(
            cut == MediaError(.truncated, "the Ogg sound is cut short: its last page runs past the end of the file"))
        // Cut between pages: every page is whole, but the last one lacks the end-of-stream flag.
        let lastPage = try #require(Self.lastOffset(of: "OggS", in: ogg))
        let missingEnd = try #require(Self.error(probing: Array(ogg.prefix(lastPage))))
        #expect(
            missingEnd
                == MediaError(
                    .truncated,
                    "the Ogg sound is cut short: it ends without its last page (the end-of-stream mark is missing)"))
    }

    @Test func anOggPageWithAFlippedByteFailsItsChecksum() throws {
        var ogg = try Self.bytes("sound-vorbis.ogg")
        ogg[ogg.count - 20] ^= 0x01
        let error = try #require(Self.error(probing: ogg))
        #expect(error.kind == .malformed)
        #expect(error.message.hasSuffix("fails its checksum (CRC)"), "\(error)")
    }

    @Test func anM4ACutShortIsTruncated() throws {
        let m4a = try Self.bytes("sound.m4a")
        let index = try #require(Self.offset(of: "moov", in: m4a)) - 4
        // ffmpeg writes the index after the sound: a recording that stopped early lacks it.
        let error = try #require(Self.error(probing: Array(m4a.prefix(index))))
        #expect(
            error == MediaError(.truncated, "the AAC (M4A) sound is cut short: it ends before its index (moov box)"))
        let midway = try #require(Self.error(probing: Array(m4a.prefix(m4a.count / 2))))
        #expect(
            midway
                == MediaError(
                    .truncated, "the AAC (M4A) sound is cut short: its mdat box runs past the end of the file"))
    }

    @Test(arguments: ["sound-cbr.mp3", "sound-vbr.mp3"])
    func anMP3CutShortIsTruncated(_ name: String) throws {
        let mp3 = try Self.bytes(name)
        let error = try #require(Self.error(probing: Array(mp3.prefix(mp3.count - 50))))
        #expect(error.kind == .truncated, "\(error)")
        #expect(error.message.hasPrefix("the MP3 sound is cut short: "))
    }

    @Test func anMP3WithTagsAndPaddingAfterItsFramesIsWhole() throws {
        let mp3 = try Self.bytes("sound-cbr.mp3")
        var id3v1 = Array("TAG".utf8)
        id3v1 += Array(repeating: 0x20, count: 125)
        let tagged = try MediaProbe.probe(BytesMediaSource(mp3 + id3v1))
        #expect(abs(tagged.duration - 60.0 * 576 / 22_050) < 1e-9)
        let padded = try MediaProbe.probe(BytesMediaSource(mp3 + Array(repeating: 0, count: 500)))
        #expect(padded == tagged)
        let garbage = try #require(Self.error(probing: mp3 + Array(repeating: 0x41, count: 500)))
        #expect(garbage.kind == .malformed)
    }

    @Test func aFLACCutInsideItsMetadataIsTruncated() throws {
        let flac = try Self.bytes("sound.flac")
        for length in [20, 45, 80] {
            let error = try #require(Self.error(probing: Array(flac.prefix(length))))
            #expect(error.kind == .truncated, "cut at \(length): \(error)")
        }
        // FLAC behind an ID3 tag, as some taggers write it, is still FLAC.
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 10] + Array(repeating: 0, count: 10)
        #expect(try MediaProbe.probe(BytesMediaSource(tag + flac)).type == .flac)
    }

    @Test func aWebPWhoseRIFFSizeExceedsTheFileIsTruncated() throws {
        var webp = try Self.bytes("image-lossy.webp")
        Self.put(littleEndian: UInt32(webp.count), at: 4, in: &webp)
        let error = try #require(Self.error(probing: webp))
        #expect(error.kind == .truncated)
        #expect(error.message.hasPrefix("the WebP image is cut short: "), "\(error)")
    }

    // MARK: - Hostile input

    /// Random bytes, half of them behind a format's signature so that the
    /// parsers, not just the detection, see them; and mutated fixtures (bytes
    /// flipped, lengths forged, cuts, insertions). Nothing crashes, and every
    /// answer is either a `MediaError` with a message or a well-formed `MediaInfo`.
    @Test func randomAndMutatedInputsNeverCrashAndGiveWellFormedAnswers() throws {
        let fixtures = try Self.fixtures.map { try Self.bytes($0.name) }
        let signatures: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8),
            [0xFF, 0xD8, 0xFF, 0xE0], Array("RIFF\u{0}\u{1}\u{0}\u{0}WEBPVP8 ".utf8),
            Array("RIFF\u{0}\u{1}\u{0}\u{0}WAVEfmt ".utf8),
            Array("ID3\u{4}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}".utf8) + [0xFF, 0xFB, 0x90, 0x64], Array("fLaC".utf8),
            [0, 0, 0, 0x18] + Array("ftypM4A ".utf8), Array("OggS\u{0}\u{2}".utf8),
        ]
        var random = SeededGenerator(seed: 20_250_101)
        var outcomes = (accepted: 0, refused: [MediaError.Kind: Int]())
        for round in 0..<1000 {
            var input: [UInt8]
            if round < 500 {
                input = (0..<random.int(0...3000)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if random.chance(0.5), let signature = random.pick(signatures) { input = signature + input }
            } else {
                input = fixtures[random.int(0...fixtures.count - 1)]
                for _ in 0..<random.int(1...4) { Self.mutate(&input, using: &random) }
            }
            do {
                let info = try MediaProbe.probe(BytesMediaSource(input))
                #expect(Self.isWellFormed(info), "round \(round): \(info)")
                if round >= 500 { outcomes.accepted += 1 }
            } catch {
                #expect(error.message.hasPrefix("the "), "round \(round): \(error)")
                if round >= 500 { outcomes.refused[error.kind, default: 0] += 1 }
            }
        }
        // The mutations exercise both outcomes and the parsers' checks, not only detection.
        #expect(outcomes.accepted > 20, "\(outcomes)")
        #expect(outcomes.refused[.truncated, default: 0] > 20, "\(outcomes)")
        #expect(outcomes.refused[.malformed, default: 0] > 20, "\(outcomes)")
    }

    @Test func aGigabyteFileIsProbedInBoundedReads() throws {
        // A WAV of 1 GiB of silence, never in memory: 48 kHz, 16-bit stereo.
        var header = Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8) + [16, 0, 0, 0, 1, 0, 2, 0]
        header += [0x80, 0xBB, 0, 0, 0x00, 0xEE, 0x02, 0, 4, 0, 16, 0] + Array("data".utf8) + [0, 0, 0, 0]
        let byteCount: UInt64 = 1 << 30
        Self.put(littleEndian: UInt32(byteCount - 44), at: 40, in: &header)
        let wav = GeneratedSource(prefix: header, byteCount: byteCount) { _ in 0 }
        let info = try MediaProbe.probe(wav)
        #expect(info == MediaInfo(type: .wav, duration: Double(byteCount - 44) / 192_000))
        #expect(wav.log.largestRead <= 1 << 16 && wav.log.bytesRead <= 1 << 17, "\(wav.log)")

        // A 4 MiB MP3 without a Xing header: every frame is walked, through 64 KiB reads.
        let frame: [UInt8] = [0xFF, 0xF3, 0x40, 0xC0] + Array(repeating: 0, count: 100)  // MPEG 2, 32 kbit/s, 22 050 Hz
        let frames: UInt64 = 40_000
        let mp3 = GeneratedSource(prefix: [], byteCount: frames * 104) { frame[Int($0 % 104)] }
        #expect(try MediaProbe.probe(mp3) == MediaInfo(type: .mp3, duration: Double(frames) * 576 / 22_050))
        #expect(mp3.log.largestRead <= 1 << 16, "\(mp3.log)")
        #expect(mp3.log.bytesRead <= frames * 104 + 1 << 17, "\(mp3.log)")
    }

    @Test func forgedLengthsAreRefusedWithoutReadingThem() throws {
        let forgeries: [[UInt8]] = [
            // A PNG whose IHDR claims 2 GiB.
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x7F, 0xFF, 0xFF, 0xFF] + Array("IHDR".utf8)
                + Array(repeating: 1, count: 40),
            // An ID3 tag of 256 MiB.
            Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + Array(repeating: 0, count: 40),
            // An M4A whose second box has a 64-bit size of 2^63.
            [0, 0, 0, 16] + Array("ftypM4A ".utf8) + [0, 0, 0, 0, 0, 0, 0, 1] + Array("mdat".utf8) + [0x80]
                + Array(repeating: 0, count: 7),
            // A WebP whose RIFF size is 4 GiB.
            Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("WEBPVP8 ".utf8) + Array(repeating: 0, count: 20),
        ]
        for forgery in forgeries {
            let source = GeneratedSource(prefix: forgery, byteCount: UInt64(forgery.count)) { _ in 0 }
            let error = try #require(Self.error(probing: source))
            #expect(error.kind == .truncated || error.kind == .malformed, "\(error)")
            #expect(source.log.bytesRead <= UInt64(forgery.count) * 4, "\(source.log)")
        }
    }

    @Test func aSourceThatFailsOrShrinksMakesTheFileUnreadable() throws {
        let png = try Self.bytes("image.png")
        // The source claims more bytes than it then gives.
        let shrunk = GeneratedSource(prefix: png, byteCount: UInt64(png.count) + 10_000, stopsAt: UInt64(png.count)) {
            _ in 0
        }
        let error = try #require(Self.error(probing: shrunk))
        #expect(error.kind == .unreadable, "\(error)")
        let failing = GeneratedSource(prefix: png, byteCount: UInt64(png.count), failsAt: 100) { _ in 0 }
        #expect(Self.error(probing: failing) == MediaError(.unreadable, "disk error"))
    }

    @Test func checksumsMatchTheirStandardCheckValues() {
        let check = Array("123456789".utf8)
        #expect(CRC32.checksum(check) == 0xCBF4_3926)  // CRC-32/ISO-HDLC
        // Ogg's parameters (polynomial 0x04C11DB7, zero start, no reflection or final complement) are CRC-32/CKSUM's
        // without its final complement: ~0x765E7680 (also checked against a bit-by-bit implementation).
        #expect(OggCRC32.checksum(check) == 0x89A1_897F)
        var pieces = CRC32()
        pieces.update(Array(check.prefix(4)))
        pieces.update(Array(check.dropFirst(4)))
        #expect(pieces.checksum == 0xCBF4_3926)
    }

    /// The eight-bytes-a-step CRC-32 equals the plain one-byte-a-step
    /// definition for every length and every split into pieces.
    @Test func crc32EightBytesAStepMatchesTheBytewiseDefinition() {
        func bytewise(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            return ~crc
        }
        var generator = SeededGenerator(seed: 14)
        let data = (0..<4_099).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for length in Array(0...40) + [63, 64, 65, 1_000, 4_099] {
            let bytes = Array(data.prefix(length))
            #expect(CRC32.checksum(bytes) == bytewise(bytes), "length \(length)")
        }
        let expected = bytewise(data)
        for split in [1, 3, 7, 8, 9, 1_001, 4_098] {
            var pieces = CRC32()
            pieces.update(Array(data.prefix(split)))
            pieces.update(Array(data.dropFirst(split)))
            #expect(pieces.checksum == expected, "split at \(split)")
        }
    }
}

// MARK: - Helpers

extension MediaProbeTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/media")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// The error probing throws, or nil when it accepts the file.
    static func error(probing bytes: [UInt8]) -> MediaError? {
        error(probing: BytesMediaSource(bytes))
    }

    static func error(probing source: some MediaSource) -> MediaError? {
        do {
            _ = try MediaProbe.probe(source)
            return nil
        } catch {
            return error
        }
    }

    /// What `MediaReference.isWellFormed` asks of the numbers, and nothing in between.
    static func isWellFormed(_ info: MediaInfo) -> Bool {
        if info.type.isImage {
            return (1...65_536).contains(info.pixelWidth) && (1...65_536).contains(info.pixelHeight)
                && info.duration == 0
        }
        return info.pixelWidth == 0 && info.pixelHeight == 0 && info.duration.isFinite && info.duration >= 0
            && info.duration <= 86_400
    }

    static func offset(of tag: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(tag.utf8)
        return bytes.indices.first { bytes[$0...].starts(with: tag) }
    }

    static func lastOffset(of tag: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(tag.utf8)
        return bytes.indices.last { bytes[$0...].starts(with: tag) }
    }

    static func put(bigEndian value: UInt32, at index: Int, in bytes: inout [UInt8]) {
        for byte in 0..<4 { bytes[index + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
    }

    static func put(littleEndian value: UInt32, at index: Int, in bytes: inout [UInt8]) {
        for byte in 0..<4 { bytes[index + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
    }

    /// One of the ways files go wrong, at a random place.
    static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        guard !bytes.isEmpty else { return }
        let at = random.int(0...bytes.count - 1)
        switch random.int(0...5) {
        case 0:
            bytes[at] ^= UInt8(1 << random.int(0...7))
        case 1:
            // A length or size field forged: all ones, zero, or a random value.
            guard at + 4 <= bytes.count else { return }
            let value =
                random.pick([UInt32.max, 0, 0x7FFF_FFFF, UInt32.random(in: 0...UInt32.max, using: &random)]) ?? 0
            put(bigEndian: value, at: at, in: &bytes)
        case 2:
            bytes.removeLast(bytes.count - at)
        case 3:
            bytes.insert(
                contentsOf: (0..<random.int(1...64)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
        case 4:
            bytes.removeSubrange(at..<min(bytes.count, at + random.int(1...64)))
        default:
            let end = min(bytes.count, at + random.int(1...256))
            bytes.insert(contentsOf: bytes[at..<end], at: end)
        }
    }
}

/// A file that is not in memory: `prefix`, then bytes made by `filler` from
/// their offset; it records the reads made of it, and can fail or give out.
final class GeneratedSource: MediaSource {
    struct Log: CustomStringConvertible {
        var reads = 0
        var bytesRead: UInt64 = 0
        var largestRead = 0
        var description: String { "\(reads) reads, \(bytesRead) bytes, largest \(largestRead)" }
    }

    let byteCount: UInt64
    private let prefix: [UInt8]
    private let filler: (UInt64) -> UInt8
    private let stopsAt: UInt64
    private let failsAt: UInt64
    private(set) var log = Log()

    init(
        prefix: [UInt8], byteCount: UInt64, stopsAt: UInt64 = .max, failsAt: UInt64 = .max,
        filler: @escaping (UInt64) -> UInt8
    ) {
        self.prefix = prefix
        self.byteCount = byteCount
        self.stopsAt = min(stopsAt, byteCount)
        self.failsAt = failsAt
        self.filler = filler
    }

    func read(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8] {
        guard offset < stopsAt, count > 0 else { return [] }
        let end = min(stopsAt, offset + UInt64(count))
        if failsAt >= offset && failsAt < end { throw MediaError(.unreadable, "disk error") }
        log.reads += 1
        log.bytesRead += end - offset
        log.largestRead = max(log.largestRead, count)
        return (offset..<end).map { $0 < UInt64(prefix.count) ? prefix[Int($0)] : filler($0) }
    }
}

/// EXIF orientation: read where it is, 1 for anything else, never out of bounds.
@Suite struct JPEGOrientationTests {
    @Test func onlyAWellFormedOrientationTagCounts() {
        #expect(JPEGOrientation.orientation(inAPP1: Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]) == 1, "XMP, not EXIF")
        #expect(JPEGOrientation.orientation(inAPP1: Array("Exif".utf8) + [0, 0, 0x4D]) == 1, "cut short")
        var random = SeededGenerator(seed: 5)
        for _ in 0..<2_000 {
            let tail = (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let value = JPEGOrientation.orientation(inAPP1: Array("Exif".utf8) + [0, 0] + tail)
            #expect((1...8).contains(value))
        }
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        #expect(bytes.withUnsafeBytes { JPEGOrientation.orientation(ofJPEG: $0) } == 1, "no APP1 at all")
        #expect(JPEGOrientation.swapsSides(6) && JPEGOrientation.swapsSides(5) && !JPEGOrientation.swapsSides(3) && !JPEGOrientation.swapsSides(1))
    }
}
