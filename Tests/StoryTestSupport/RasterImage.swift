import CCairo

/// A PNG decoded by cairo's reader, for tests to sample pixels of a render
/// (or of what `pdftoppm` or `rsvg-convert` made of one).
package struct RasterImage: Sendable {
    /// One pixel, not premultiplied.
    package struct Pixel: Hashable, Sendable, CustomStringConvertible {
        package var red: Int, green: Int, blue: Int, alpha: Int

        package var description: String { "rgba(\(red), \(green), \(blue), \(alpha))" }

        /// The darkest channel is dark: ink of any colour on a light ground.
        package var isDark: Bool { max(red, green, blue) < 110 && alpha > 200 }
        /// Every channel near 255 (a white background).
        package var isWhite: Bool { min(red, green, blue) > 235 && alpha > 200 }
        /// Clearly more red than green and blue.
        package var isReddish: Bool { red > green + 40 && red > blue + 40 }
        /// Clearly more blue than red and green.
        package var isBluish: Bool { blue > red + 40 && blue > green + 40 }
        /// Red over green over blue, clearly apart (an orange).
        package var isOrange: Bool { red > green + 30 && green > blue + 30 }
        /// Clearly more green than red and blue.
        package var isGreenish: Bool { green > red + 40 && green > blue + 40 }

        /// Whether every channel is within `tolerance` of the other's.
        package func isClose(to other: Pixel, tolerance: Int = 12) -> Bool {
            abs(red - other.red) <= tolerance && abs(green - other.green) <= tolerance && abs(blue - other.blue) <= tolerance
                && abs(alpha - other.alpha) <= tolerance
        }

        package init(red: Int, green: Int, blue: Int, alpha: Int = 255) {
            (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
        }
    }

    /// Why a PNG was not decoded.
    package struct DecodingError: Error, CustomStringConvertible {
        package let description: String
    }

    package let width: Int
    package let height: Int
    /// cairo's ARGB32 words (premultiplied), row by row.
    private let words: [UInt32]

    /// Decodes PNG bytes.
    /// - Throws: `DecodingError` when cairo does not read them as a PNG.
    package init(png bytes: [UInt8]) throws {
        final class Cursor {
            let bytes: [UInt8]
            var offset = 0
            init(_ bytes: [UInt8]) { self.bytes = bytes }
        }
        let cursor = Cursor(bytes)
        let surface = cairo_image_surface_create_from_png_stream(
            { closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
                let cursor = Unmanaged<Cursor>.fromOpaque(closure).takeUnretainedValue()
                guard cursor.bytes.count - cursor.offset >= Int(length) else { return CAIRO_STATUS_READ_ERROR }
                for index in 0..<Int(length) { data[index] = cursor.bytes[cursor.offset + index] }
                cursor.offset += Int(length)
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(cursor).toOpaque())
        defer { cairo_surface_destroy(surface) }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw DecodingError(description: "not a PNG cairo reads: \(String(cString: cairo_status_to_string(status)))")
        }
        // Whatever the PNG held, read it as ARGB32 by painting it onto such a surface.
        let (width, height) = (Int(cairo_image_surface_get_width(surface)), Int(cairo_image_surface_get_height(surface)))
        let argb = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
        defer { cairo_surface_destroy(argb) }
        let context = cairo_create(argb)
        cairo_set_source_surface(context, surface, 0, 0)
        cairo_set_operator(context, CAIRO_OPERATOR_SOURCE)
        cairo_paint(context)
        cairo_destroy(context)
        cairo_surface_flush(argb)
        let stride = Int(cairo_image_surface_get_stride(argb))
        let data = cairo_image_surface_get_data(argb)!
        var words: [UInt32] = []
        words.reserveCapacity(width * height)
        for y in 0..<height {
            let row = UnsafeRawPointer(data + y * stride)
            for x in 0..<width { words.append(row.load(fromByteOffset: x * 4, as: UInt32.self)) }
        }
        (self.width, self.height, self.words) = (width, height, words)
    }

    /// The pixel at (x, y), 0-based from the top left.
    package subscript(x: Int, y: Int) -> Pixel {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "(\(x), \(y)) is outside \(width)×\(height)")
        let word = words[y * width + x]
        let alpha = Int(word >> 24)
        func channel(_ shift: UInt32) -> Int {
            let value = Int((word >> shift) & 0xFF)
            return alpha == 0 ? 0 : min(255, (value * 255 + alpha / 2) / alpha)
        }
        return Pixel(red: channel(16), green: channel(8), blue: channel(0), alpha: alpha)
    }

    /// The pixel at a fraction of the width and height (0.5, 0.5: the middle).
    package func pixel(atFraction x: Double, _ y: Double) -> Pixel {
        self[min(width - 1, Int(x * Double(width))), min(height - 1, Int(y * Double(height)))]
    }

    /// How many pixels of column `x` from `rows` satisfy `isInk` (a stroke's width where it crosses the column).
    package func count(inColumn x: Int, rows: Range<Int>? = nil, where isInk: (Pixel) -> Bool) -> Int {
        (rows ?? 0..<height).filter { isInk(self[x, $0]) }.count
    }
}
