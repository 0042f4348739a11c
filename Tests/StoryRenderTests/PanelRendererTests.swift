import Foundation
import StoryCore
import StoryMedia
import StoryTestSupport
import Testing

@testable import StoryRender

/// Panels rendered to PNG, PDF and SVG, checked by their pixels: decoded by
/// cairo's PNG reader, or rasterised by independent programs (poppler's
/// `pdftoppm`, librsvg's `rsvg-convert`), and PDFs read by `pdfinfo`.
/// Positions are fractions of the default 1600×900 (16:9) panel.
@Suite struct PanelRendererTests {
    /// A thick black diagonal over a blue-over-yellow picture shrunk into the
    /// bottom-left corner by its layer's transform, in a white shot.
    static func strokeAndPicture() throws -> (board: TestBoard, shot: OpID, pictures: [BlobHash: String], scratch: ScratchDirectory) {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let scratch = try ScratchDirectory()
        let image = picture(.png, width: 64, height: 48, tag: 1)
        let file = try scratch.write(bands(width: 64, height: 48), named: "bands.png")
        // Fitted (contain) to x 200…1400 of the frame, then a quarter of that, 0.7 of the height down: x 50…350, y 630…855.
        try board.layer(on: shot, [.image: .media(image), .transform: .transform(Affine(a: 0.25, b: 0, c: 0, d: 0.25, tx: 0, ty: 0.7))])
        try board.layer(on: shot, strokes: [(Brush(width: 0.02), line((0.1, 0.1), (0.6, 0.6)))])
        return (board, shot, [image.hash: file], scratch)
    }

    /// Where `strokeAndPicture` put ink, background, picture and frame, checked in any rasterisation of it.
    static func expectStrokeAndPicture(_ image: RasterImage, _ format: String) {
        #expect(image.pixel(atFraction: 0.35, 0.35).isDark, "\(format): the stroke: \(image.pixel(atFraction: 0.35, 0.35))")
        #expect(image.pixel(atFraction: 0.85, 0.15).isWhite, "\(format): background: \(image.pixel(atFraction: 0.85, 0.15))")
        #expect(image.pixel(atFraction: 0.35, 0.15).isWhite, "\(format): beside the stroke: \(image.pixel(atFraction: 0.35, 0.15))")
        let top = image.pixel(atFraction: 200.0 / 1600, 660.0 / 900)
        let bottom = image.pixel(atFraction: 200.0 / 1600, 830.0 / 900)
        #expect(top.isClose(to: .blue, tolerance: 24), "\(format): the picture's top band: \(top)")
        #expect(bottom.isClose(to: .yellow, tolerance: 24), "\(format): the picture's bottom band: \(bottom)")
        #expect(image.pixel(atFraction: 200.0 / 1600, 600.0 / 900).isWhite, "\(format): above the picture")
        #expect(image.pixel(atFraction: 400.0 / 1600, 700.0 / 900).isWhite, "\(format): right of the picture")
        #expect(image.pixel(atFraction: 0, 0.5).isDark, "\(format): the panel's frame: \(image.pixel(atFraction: 0, 0.5))")
    }

    @Test func aPNGHasTheStrokeAndThePictureWhereTheyWereDrawn() throws {
        let (board, shot, pictures, scratch) = try Self.strokeAndPicture()
        defer { scratch.remove() }
        let image = try board.png(shot, pictures: pictures)
        #expect(image.width == 1600 && image.height == 900)
        Self.expectStrokeAndPicture(image, "png")
    }

    @Test(.requires("pdfinfo", "pdftoppm", "pdfimages")) func aPDFIsOnePageOfTheAspectRatioWithVectorInk() async throws {
        let (board, shot, pictures, scratch) = try Self.strokeAndPicture()
        defer { scratch.remove() }
        let pdf = try PanelRenderer.render(try board.shot(shot), in: board.view, as: .pdf, pictureFiles: pictures)
        #expect(pdf.starts(with: Array("%PDF-".utf8)))
        let file = try scratch.write(pdf, named: "panel.pdf")
        let info = try await ExternalProgram.run("pdfinfo", [file])
        #expect(info.status == 0, "\(info.output)")
        #expect(info.output.contains(/Pages:\s+1\n/), "\(info.output)")
        // 1600×900 CSS pixels = 1200×675 pt: 16:9.
        #expect(info.output.contains(/Page size:\s+1200 x 675 pts/), "\(info.output)")
        #expect(info.output.contains(/Title:\s+Shot 1-1/), "\(info.output)")
        let raster = try await ExternalProgram.run("pdftoppm", ["-png", "-r", "72", "-singlefile", file, scratch.path + "/pdf"])
        #expect(raster.status == 0, "\(raster.output)")
        let image = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/pdf.png"))))
        #expect(image.width == 1200 && image.height == 675)
        Self.expectStrokeAndPicture(image, "pdf")
        // The strokes are vectors: at four times the resolution the edge of the line stays sharp, so the page
        // has ink (not a bitmap's blur) in far more pixels; a vector PDF also holds no image but the picture.
        let images = try await ExternalProgram.run("pdfimages", ["-list", file])
        #expect(images.status == 0)
        #expect(images.output.split(separator: "\n").count == 3, "one image (the picture) in the PDF: \(images.output)")
    }

    @Test(.requires("rsvg-convert")) func anSVGParsesAndDrawsTheSame() async throws {
        let (board, shot, pictures, scratch) = try Self.strokeAndPicture()
        defer { scratch.remove() }
        let svg = String(decoding: try PanelRenderer.render(try board.shot(shot), in: board.view, as: .svg, pictureFiles: pictures), as: UTF8.self)
        #expect(svg.hasPrefix("<?xml"))
        #expect(svg.contains(#"width="1600""#) && svg.contains(#"height="900""#), "\(svg.prefix(300))")
        // The picture is embedded as the PNG it is.
        #expect(svg.contains("data:image/png;base64,"))
        let file = try scratch.write(Array(svg.utf8), named: "panel.svg")
        let converted = try await ExternalProgram.run("rsvg-convert", ["-o", scratch.path + "/svg.png", file])
        #expect(converted.status == 0, "rsvg-convert parses it: \(converted.output)")
        let image = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/svg.png"))))
        #expect(image.width == 1600 && image.height == 900)
        Self.expectStrokeAndPicture(image, "svg")
    }

    @Test func onionSkinShowsNeighboursOfTheSceneTintedAndFading() throws {
        var board = TestBoard()
        let shots = try board.scene(shots: 4)
        let other = try board.scene(shots: 1)[0]
        // A line per shot at its own height: A 0.2, B 0.4, C 0.6 (drawn), D 0.8; E (next scene) 0.95.
        for (shot, y) in zip(shots + [other], [0.2, 0.4, 0.6, 0.8, 0.95]) {
            try board.layer(on: shot, strokes: [(Brush(width: 0.01), line((0.1, y), (0.9, y)))])
        }
        let plain = try board.png(shots[2])
        #expect(plain.pixel(atFraction: 0.5, 0.6).isDark)
        #expect(plain.pixel(atFraction: 0.5, 0.4).isWhite && plain.pixel(atFraction: 0.5, 0.8).isWhite, "no onion skin asked for")

        let onion = try board.png(shots[2], onion: 2)
        let (a, b, c, d, e) = (
            onion.pixel(atFraction: 0.5, 0.2), onion.pixel(atFraction: 0.5, 0.4), onion.pixel(atFraction: 0.5, 0.6),
            onion.pixel(atFraction: 0.5, 0.8), onion.pixel(atFraction: 0.5, 0.95)
        )
        #expect(c.isDark, "the shot itself, in its own colour: \(c)")
        #expect(b.isReddish, "the previous shot is red: \(b)")
        #expect(a.isReddish, "two shots back is red too: \(a)")
        #expect(a.green > b.green + 20, "and fainter with distance: \(a) against \(b)")
        #expect(d.isGreenish, "the next shot is green: \(d)")
        #expect(e.isWhite, "a shot of the next scene is not shown: \(e)")
        #expect(!b.isDark && !d.isDark, "onion skins are faint: \(b) \(d)")
    }

    @Test func onionSkinsTakeTheProjectsColours() throws {
        var board = TestBoard()
        let shots = try board.scene(shots: 3)
        for (shot, y) in zip(shots, [0.3, 0.5, 0.7]) {
            try board.layer(on: shot, strokes: [(Brush(width: 0.01), line((0.1, y), (0.9, y)))])
        }
        try board.set(.onionBefore, to: .color(Color(red: 0x1e, green: 0x40, blue: 0xff)))
        try board.set(.onionAfter, to: .color(Color(red: 0xff, green: 0x8c, blue: 0x00)))
        let onion = try board.png(shots[1], onion: 1)
        let earlier: RasterImage.Pixel = onion.pixel(atFraction: 0.5, 0.3)
        let later: RasterImage.Pixel = onion.pixel(atFraction: 0.5, 0.7)
        #expect(earlier.isBluish, "the shot before in the project's blue: \(earlier)")
        #expect(later.isOrange, "the shot after in the project's orange: \(later)")
        #expect(onion.pixel(atFraction: 0.5, 0.5).isDark)

        // Unset again: red and green.
        try board.set(.onionBefore, to: .null)
        #expect(try board.png(shots[1], onion: 1).pixel(atFraction: 0.5, 0.3).isReddish)
    }

    @Test func pressureWidensTheLineAlongTheStroke() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        // 48 px at full pressure; pressure rises from 0.1 at x 0.1 to 1.0 at x 0.9.
        try board.layer(on: shot, strokes: [(Brush(width: 0.03), line((0.1, 0.5), (0.9, 0.5), count: 40, pressure: 0.1, to: 1.0))])
        let image = try board.png(shot)
        let rows = 300..<600
        let start = image.count(inColumn: Int(0.15 * 1600), rows: rows) { $0.isDark }
        let middle = image.count(inColumn: Int(0.5 * 1600), rows: rows) { $0.isDark }
        let end = image.count(inColumn: Int(0.85 * 1600), rows: rows) { $0.isDark }
        // Pressure 0.16, 0.55 and 0.94 there: about 7.5, 26 and 45 pixels.
        #expect((5...11).contains(start), "thin where the pen touched down: \(start) px")
        #expect((22...30).contains(middle), "\(middle) px halfway")
        #expect((40...50).contains(end), "wide where it pressed: \(end) px")
    }

    @Test(arguments: [Brush.Cap.round, .butt, .square], [false, true])
    func capsAreTheBrushs(cap: Brush.Cap, varyingPressure: Bool) throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        // 48 px wide, ending at x 640 (0.4); with varying pressure its end is still at full width.
        let points = line((0.2, 0.3), (0.4, 0.3), count: 10, pressure: varyingPressure ? 0.5 : 1, to: 1)
        try board.layer(on: shot, strokes: [(Brush(width: 0.03, cap: cap), points)])
        let image = try board.png(shot)
        let past = image[640 + 12, 270]  // beyond the end, on the line's axis
        let corner = image[640 + 20, 270 - 20]  // beyond the end, off to the side: inside a square cap only
        #expect(image[600, 270].isDark)
        switch cap {
        case .round: #expect(past.isDark && corner.isWhite, "round: \(past) \(corner)")
        case .butt: #expect(past.isWhite && corner.isWhite, "butt: \(past) \(corner)")
        case .square: #expect(past.isDark && corner.isDark, "square: \(past) \(corner)")
        }
    }

    @Test(arguments: [Brush.Join.round, .miter, .bevel], [false, true])
    func joinsAreTheBrushs(join: Brush.Join, varyingPressure: Bool) throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        // A right angle at (800, 450), 64 px wide: a miter fills the corner's square, a bevel cuts it, round between.
        let pressure = varyingPressure ? [0.6, 1, 0.6] : [1.0, 1, 1]
        let points = [
            Point(x: 0.3, y: 0.5, pressure: pressure[0]), Point(x: 0.5, y: 0.5, pressure: pressure[1]), Point(x: 0.5, y: 0.1, pressure: pressure[2]),
        ]
        try board.layer(on: shot, strokes: [(Brush(width: 0.04, join: join), points)])
        let image = try board.png(shot)
        let corner = image[800 + 28, 450 + 28]  // near the outer corner of the square
        let round = image[800 + 20, 450 + 20]  // inside the round join (22.6 px from the centre), outside the bevel
        switch join {
        case .miter: #expect(corner.isDark && round.isDark, "miter: \(corner) \(round)")
        case .round: #expect(!corner.isDark && round.isDark, "round: \(corner) \(round)")
        case .bevel: #expect(!corner.isDark && !round.isDark, "bevel: \(corner) \(round)")
        }
    }

    @Test func layersColourOpacityEraserAndTransform() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let paper = Color(red: 240, green: 224, blue: 192)
        try board.set(.background, to: .color(paper), on: shot)
        let black = Brush(width: 0.02)
        try board.layer(on: shot, strokes: [(black, line((0.1, 0.2), (0.9, 0.2)))], [.opacity: .number(0.5)])
        try board.layer(on: shot, strokes: [(black, line((0.1, 0.4), (0.9, 0.4)))], [.visible: .bool(false)])
        try board.layer(
            on: shot,
            strokes: [(black, line((0.1, 0.6), (0.9, 0.6))), (Brush(tool: .eraser, width: 0.05), line((0.5, 0.5), (0.5, 0.7)))])
        try board.layer(on: shot, strokes: [(Brush(color: Color(rgba: 0xFF00_0080), width: 0.02), line((0.1, 0.7), (0.3, 0.7)))])
        try board.layer(
            on: shot, strokes: [(black, line((0.1, 0.85), (0.2, 0.85)))], [.transform: .transform(.translation(x: 0.25, y: 0))])
        let image = try board.png(shot)
        let paperPixel = RasterImage.Pixel(red: 240, green: 224, blue: 192)
        #expect(
            image.pixel(atFraction: 0.5, 0.1).isClose(to: paperPixel, tolerance: 2), "the shot's background: \(image.pixel(atFraction: 0.5, 0.1))")
        #expect(image.pixel(atFraction: 0.5, 0.2).isClose(to: .init(red: 120, green: 112, blue: 96), tolerance: 4), "a layer at 50 %")
        #expect(image.pixel(atFraction: 0.5, 0.4).isClose(to: paperPixel, tolerance: 2), "a hidden layer is not drawn")
        #expect(image.pixel(atFraction: 0.3, 0.6).isDark)
        #expect(image.pixel(atFraction: 0.5, 0.6).isClose(to: paperPixel, tolerance: 2), "the eraser paints the background")
        #expect(image.pixel(atFraction: 0.2, 0.7).isClose(to: .init(red: 248, green: 112, blue: 96), tolerance: 4), "red at half alpha")
        #expect(image.pixel(atFraction: 0.15, 0.85).isClose(to: paperPixel, tolerance: 2), "moved away by its layer's transform")
        #expect(image.pixel(atFraction: 0.4, 0.85).isDark, "to a quarter of the width further right")
    }

    @Test func aLayerFlattenedByItsTransformShowsNothingAndTheRestIsDrawn() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let thick = Brush(width: 0.02)
        try board.layer(on: shot, strokes: [(thick, line((0.1, 0.5), (0.9, 0.5)))], [.transform: .transform(.scale(x: 0, y: 0))])
        try board.layer(on: shot, strokes: [(thick, line((0.1, 0.3), (0.9, 0.3)))], [.transform: .transform(.scale(x: 1, y: 0))])
        try board.layer(on: shot, strokes: [(thick, line((0.1, 0.7), (0.9, 0.7)))])
        for format in PanelFormat.allCases {
            #expect(try !PanelRenderer.render(try board.shot(shot), in: board.view, as: format).isEmpty, "\(format)")
        }
        let image = try board.png(shot)
        #expect(image.pixel(atFraction: 0.5, 0.7).isDark, "the other layer")
        #expect(image.pixel(atFraction: 0.5, 0.5).isWhite && image.pixel(atFraction: 0.5, 0.3).isWhite && image.pixel(atFraction: 0.1, 0.02).isWhite)
    }

    @Test(.requires("pdfinfo")) func thePanelHasTheAspectRatio() async throws {
        var board = TestBoard()
        let shots = try board.scene(shots: 2)
        try board.set(.aspectRatio, to: .number(2.39))
        try board.set(.aspectRatio, to: .number(1), on: shots[1])
        let wide = try board.png(shots[0])
        #expect(wide.width == 1600 && wide.height == 669)
        let square = try board.png(shots[1], width: 400)
        #expect(square.width == 400 && square.height == 400)
        let pdf = try PanelRenderer.render(try board.shot(shots[0]), in: board.view, as: .pdf, width: 800)
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let info = try await ExternalProgram.run("pdfinfo", [try scratch.write(pdf, named: "wide.pdf")])
        #expect(info.output.contains(/Page size:\s+600 x 251(\.\d+)? pts/), "\(info.output)")
    }

    @Test func sizesOutOfRangeAreRefused() throws {
        var board = TestBoard()
        let shots = try board.scene(shots: 2)
        try board.set(.aspectRatio, to: .number(0.1), on: shots[1])
        let (shot, tall) = (try board.shot(shots[0]), try board.shot(shots[1]))
        for (width, onion, words) in [(15, 0, "width must be 16 to 8192"), (8193, 0, "width"), (1600, 11, "onion must be 0 to 10")] {
            #expect {
                try PanelRenderer.render(shot, in: board.view, as: .png, width: width, onion: onion)
            } throws: { error in
                (error as? RenderError)?.code == .outOfRange && "\(error)".contains(words)
            }
        }
        // At 1:10 a 1600-pixel-wide panel would be 16,000 pixels high.
        #expect {
            try PanelRenderer.render(tall, in: board.view, as: .png, width: 1600)
        } throws: { error in
            (error as? RenderError)?.code == .outOfRange && "\(error)".contains("at most 819 pixels")
        }
        #expect(try RasterImage(png: PanelRenderer.render(tall, in: board.view, as: .png, width: 819)).height == 8190)
    }

    @Test(.requires("pdftoppm", "rsvg-convert"), arguments: [("bands.jpg", MediaType.jpeg), ("bands.webp", .webp), ("bands.png", .png)])
    func picturesOfEachTypeAreDrawnTheRightWayUp(name: String, type: MediaType) async throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = type == .png ? try scratch.write(bands(width: 64, height: 48), named: name) : try fixture(name)
        let image = picture(type, width: 64, height: 48, tag: 7)
        try board.layer(on: shot, [.image: .media(image), .fit: .string("stretch")])
        for format in PanelFormat.allCases {
            let bytes = try PanelRenderer.render(try board.shot(shot), in: board.view, as: format, width: 640, pictureFiles: [image.hash: path])
            let raster: RasterImage
            switch format {
            case .png: raster = try RasterImage(png: bytes)
            case .pdf:
                let file = try scratch.write(bytes, named: "p.pdf")
                #expect(try await ExternalProgram.run("pdftoppm", ["-png", "-r", "72", "-singlefile", file, scratch.path + "/p"]).status == 0)
                raster = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/p.png"))))
            case .svg:
                let file = try scratch.write(bytes, named: "p.svg")
                #expect(try await ExternalProgram.run("rsvg-convert", ["-o", scratch.path + "/s.png", file]).status == 0)
                raster = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/s.png"))))
            }
            let (top, bottom) = (raster.pixel(atFraction: 0.5, 0.2), raster.pixel(atFraction: 0.5, 0.8))
            #expect(top.isClose(to: .blue, tolerance: 30), "\(name) in \(format): top \(top)")
            #expect(bottom.isClose(to: .yellow, tolerance: 30), "\(name) in \(format): bottom \(bottom)")
        }
    }

    /// A phone's photo taken sideways: its pixels stored the other way, EXIF says how to turn them.
    @Test(.requires("pdftoppm"), arguments: [(UInt16(6), true), (8, false), (3, true)])
    func aJPEGIsDrawnTurnedAsItsEXIFSays(orientation: UInt16, bigEndian: Bool) async throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // bands.jpg is 64×48, blue over yellow; turned a quarter it is seen 48×64.
        let turned = withEXIFOrientation(
            Array(try Data(contentsOf: URL(fileURLWithPath: try fixture("bands.jpg")))), orientation, bigEndian: bigEndian)
        let path = try scratch.write(turned, named: "turned.jpg")
        let probed = try MediaProbe.probe(BytesMediaSource(turned))
        let quarter = orientation != 3
        #expect(probed.pixelWidth == (quarter ? 48 : 64) && probed.pixelHeight == (quarter ? 64 : 48), "\(probed)")
        let image = picture(.jpeg, width: probed.pixelWidth, height: probed.pixelHeight, tag: 11)
        try board.layer(on: shot, [.image: .media(image), .fit: .string("stretch")])
        for format in [PanelFormat.png, .pdf] {
            let bytes = try PanelRenderer.render(try board.shot(shot), in: board.view, as: format, width: 640, pictureFiles: [image.hash: path])
            let raster: RasterImage
            if format == .png {
                raster = try RasterImage(png: bytes)
            } else {
                let file = try scratch.write(bytes, named: "p.pdf")
                #expect(try await ExternalProgram.run("pdftoppm", ["-png", "-r", "72", "-singlefile", file, scratch.path + "/p"]).status == 0)
                raster = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/p.png"))))
            }
            // 6: turned clockwise, the top (blue) is on the right; 8: on the left; 3: upside down, at the bottom.
            let (blueAt, yellowAt): ((Double, Double), (Double, Double)) =
                switch orientation {
                case 6: ((0.8, 0.5), (0.2, 0.5))
                case 8: ((0.2, 0.5), (0.8, 0.5))
                default: ((0.5, 0.8), (0.5, 0.2))
                }
            let (blue, yellow) = (raster.pixel(atFraction: blueAt.0, blueAt.1), raster.pixel(atFraction: yellowAt.0, yellowAt.1))
            #expect(blue.isClose(to: .blue, tolerance: 30), "orientation \(orientation) in \(format): \(blue) where blue should be")
            #expect(yellow.isClose(to: .yellow, tolerance: 30), "orientation \(orientation) in \(format): \(yellow) where yellow should be")
        }
    }

    @Test func aPictureThatIsNotHereIsOutlinedAndLabelled() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let image = picture(.jpeg, width: 640, height: 480, tag: 9)
        try board.layer(on: shot, [.image: .media(image)])
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let broken = try scratch.write(Array("not a jpeg".utf8), named: "broken.jpg")
        for pictures in [[:], [image.hash: broken]] {
            let raster = try board.png(shot, pictures: pictures)
            // Contain: x 200…1400, dashed (16 px on, 12 off); the label is in the middle.
            let dashes = raster.count(inColumn: 200, rows: 10..<890) { $0.isClose(to: .init(red: 136, green: 136, blue: 136), tolerance: 30) }
            #expect((400...600).contains(dashes), "a dashed outline down the left side: \(dashes) px")
            let label = (300..<1300).filter { !raster[$0, 450].isWhite }.count + (300..<1300).filter { !raster[$0, 445].isWhite }.count
            #expect(label > 20, "a label across the middle: \(label) px of text")
            #expect(raster.pixel(atFraction: 0.5, 0.25).isWhite)
        }
    }

    @Test func largeJPEGsAreDecodedReducedToTheirDrawnSize() throws {
        let path = try fixture("bands-large.jpg")  // 1600×1200
        for (wanted, width) in [((200, 150), 200), ((300, 200), 400), ((900, 700), 1600), ((800, 600), 800), ((0, 0), 1600), ((1601, 1), 1600)] {
            let decoded = try CairoPicture.load(path: path, type: .jpeg, wanted: wanted, maximumPixels: 4_000_000, keepingOriginal: false).get()
            #expect(decoded.width == width && decoded.height == width * 3 / 4, "for \(wanted): \(decoded.width)×\(decoded.height)")
        }
        #expect(throws: PictureFailure.self) {
            try CairoPicture.load(path: path, type: .jpeg, wanted: (0, 0), maximumPixels: 1_000_000, keepingOriginal: false).get()
        }
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let big = try scratch.write(bands(width: 1200, height: 1000), named: "big.png")
        let refused = CairoPicture.load(path: big, type: .png, wanted: (0, 0), maximumPixels: 1_000_000, keepingOriginal: false)
        #expect(throws: PictureFailure.self) { try refused.get() }
    }

    @Test(.requires("pdfimages")) func aJPEGGoesIntoAPDFAsItIs() async throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let image = picture(.jpeg, width: 1600, height: 1200, tag: 3)
        try board.layer(on: shot, [.image: .media(image)])
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let pdf = try PanelRenderer.render(try board.shot(shot), in: board.view, as: .pdf, pictureFiles: [image.hash: try fixture("bands-large.jpg")])
        let listed = try await ExternalProgram.run("pdfimages", ["-list", try scratch.write(pdf, named: "jpeg.pdf")])
        let rows = listed.output.split(separator: "\n").dropFirst(2).map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.count == 1, "\(listed.output)")
        // page num type width height color comp bpc enc …
        #expect(rows.first.map { Array($0[3...5]) + [$0[8]] } == ["1600", "1200", "rgb", "jpeg"], "\(listed.output)")
    }

    @Test func onlyVisiblePicturesAreAskedFor() throws {
        var board = TestBoard()
        let shot = try board.scene(shots: 1)[0]
        let (shown, hidden) = (picture(.png, width: 4, height: 4, tag: 1), picture(.png, width: 4, height: 4, tag: 2))
        try board.layer(on: shot, [.image: .media(shown)])
        try board.layer(on: shot, [.image: .media(hidden), .visible: .bool(false)])
        try board.layer(on: shot, [.image: .media(shown)])
        #expect(PanelRenderer.pictures(drawnIn: try board.shot(shot)) == [shown])
    }
}
