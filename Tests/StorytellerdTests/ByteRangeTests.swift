import Testing

@testable import StoryDaemon

/// `Range: bytes=…` as the preview reads it, so a browser can seek in a sound.
@Suite struct ByteRangeTests {
    @Test(arguments: [
        ("bytes=0-99", ByteRange.Request.part(ByteRange(first: 0, last: 99))),
        ("bytes=100-", .part(ByteRange(first: 100, last: 999))),
        ("bytes=-100", .part(ByteRange(first: 900, last: 999))),
        ("bytes=-5000", .part(ByteRange(first: 0, last: 999))),
        ("bytes=990-5000", .part(ByteRange(first: 990, last: 999))),
        ("bytes= 10 - 19 ", .part(ByteRange(first: 10, last: 19))),
        ("bytes=999-999", .part(ByteRange(first: 999, last: 999))),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=20-10", .whole),
        ("bytes=0-1,5-9", .whole),
        ("items=0-1", .whole),
        ("bytes=a-b", .whole),
        ("bytes=-", .whole),
        ("bytes=99999999999999999999999-", .whole),
    ])
    func aRangeHeaderIsReadAsTheRFCSays(header: String, expected: ByteRange.Request) {
        #expect(ByteRange.parse(header, size: 1000) == expected, "\(header)")
    }

    @Test func noHeaderIsTheWholeFile() {
        #expect(ByteRange.parse(nil, size: 10) == .whole)
        #expect(ByteRange(first: 10, last: 19).contentRange(of: 1000) == "bytes 10-19/1000")
        #expect(ByteRange(first: 10, last: 19).count == 10)
    }
}
