import StoryCore
import StoryTestSupport
import Testing

@testable import StoryRender

/// A shot as an animatic frame: letterboxed into the frame's size, its caption burned in.
@Suite struct AnimaticFrameTests {
    @Test func aSquareShotIsPillarboxedAndAWideOneLetterboxed() throws {
        var board = TestBoard()
        let shots = try board.scene(shots: 2)
        try board.set(.background, to: .color(Color(red: 0, green: 0, blue: 255)), on: shots[0])
        try board.set(.aspectRatio, to: .number(1), on: shots[0])
        try board.set(.background, to: .color(Color(red: 0, green: 255, blue: 0)), on: shots[1])
        try board.set(.aspectRatio, to: .number(2.39), on: shots[1])

        let square = try RasterImage(png: AnimaticFrame.render(try board.shot(shots[0]), width: 320, height: 180))
        #expect(square.width == 320 && square.height == 180)
        #expect(square[5, 90].isClose(to: .black) && square[314, 90].isClose(to: .black))
        #expect(square[160, 90].isClose(to: .blue))
        // 180 × 180 in the middle: bars of 70 pixels at each side.
        #expect(square[68, 90].isClose(to: .black) && square[74, 90].isClose(to: .blue))

        let wide = try RasterImage(png: AnimaticFrame.render(try board.shot(shots[1]), width: 320, height: 180))
        #expect(wide[160, 3].isClose(to: .black) && wide[160, 176].isClose(to: .black))
        #expect(wide[160, 90].isClose(to: Pixel(red: 0, green: 255, blue: 0)))
    }

    @Test func aCaptionIsBurnedInAtTheBottomAndOnlyThere() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        try board.set(.background, to: .color(Color(red: 255, green: 0, blue: 0)), on: shot)
        let plain = try RasterImage(png: AnimaticFrame.render(try board.shot(shot), width: 640, height: 360))
        let captioned = try RasterImage(
            png: AnimaticFrame.render(try board.shot(shot), width: 640, height: 360, caption: "  She runs for the last train  "))
        func whitePixels(_ image: RasterImage, rows: Range<Int>) -> Int {
            rows.reduce(0) { count, y in count + (0..<640).filter { image[$0, y].isWhite }.count }
        }
        #expect(whitePixels(plain, rows: 240..<360) == 0)
        #expect(whitePixels(captioned, rows: 240..<360) > 100)
        #expect(whitePixels(captioned, rows: 0..<240) == 0)
        // A blank caption draws nothing.
        let blank = try RasterImage(png: AnimaticFrame.render(try board.shot(shot), width: 640, height: 360, caption: " \n "))
        #expect(whitePixels(blank, rows: 240..<360) == 0)
    }

    @Test func aFrameSizeOutOfRangeIsRefused() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        #expect(throws: RenderError.self) { try AnimaticFrame.render(try board.shot(shot), width: 8, height: 180) }
        #expect(throws: RenderError.self) { try AnimaticFrame.render(try board.shot(shot), width: 320, height: 100_000) }
    }
}

private typealias Pixel = RasterImage.Pixel
