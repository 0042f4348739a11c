/// How a stroke was drawn: the tool, its colour, width and line ends.
package struct Brush: Hashable, Sendable {
    /// The drawing tool.
    package enum Tool: UInt8, CaseIterable, Sendable {
        case pen = 0
        case marker = 1
        case pencil = 2
        case eraser = 3
        case brush = 4
        case highlighter = 5

        /// The lowercase name used in JSON and on the command line.
        ///
        /// Spelled out, not `String(describing:)`: reflection took about
        /// 1 µs a name, and the lookup by name tried up to six, on every
        /// stroke an edit or the trace benchmark adds (half its time).
        package var name: String {
            switch self {
            case .pen: "pen"
            case .marker: "marker"
            case .pencil: "pencil"
            case .eraser: "eraser"
            case .brush: "brush"
            case .highlighter: "highlighter"
            }
        }

        /// The tool with that name.
        package init?(name: String) {
            guard let tool = Self.byName[name] else { return nil }
            self = tool
        }

        private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    /// How open ends of a line are drawn (SVG `stroke-linecap`).
    package enum Cap: UInt8, CaseIterable, Sendable {
        case round = 0
        case butt = 1
        case square = 2

        package var name: String {
            switch self {
            case .round: "round"
            case .butt: "butt"
            case .square: "square"
            }
        }

        package init?(name: String) {
            guard let cap = Self.byName[name] else { return nil }
            self = cap
        }

        private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    /// How corners are drawn (SVG `stroke-linejoin`).
    package enum Join: UInt8, CaseIterable, Sendable {
        case round = 0
        case miter = 1
        case bevel = 2

        package var name: String {
            switch self {
            case .round: "round"
            case .miter: "miter"
            case .bevel: "bevel"
            }
        }

        package init?(name: String) {
            guard let join = Self.byName[name] else { return nil }
            self = join
        }

        private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    package var tool: Tool
    package var color: Color
    /// Width in unit coordinates of the frame (1 = the frame's width).
    package var width: Float
    package var cap: Cap
    package var join: Join

    /// Creates a brush.
    package init(tool: Tool = .pen, color: Color = .black, width: Float = 0.003, cap: Cap = .round, join: Join = .round) {
        self.tool = tool
        self.color = color
        self.width = width
        self.cap = cap
        self.join = join
    }

    /// Whether the width is a usable, finite, non-negative number no wider than the frame.
    package var isValid: Bool { width.isFinite && width >= 0 && width <= 1 }
}

extension ByteWriter {
    /// Appends a brush: tool, colour (0xRRGGBBAA as a little-endian 32-bit word,
    /// so the bytes are A, B, G, R), width (Float32), cap/join byte.
    mutating func write(brush: Brush) {
        write(byte: brush.tool.rawValue)
        write(fixed32: brush.color.rgba)
        write(float: brush.width)
        write(byte: brush.cap.rawValue | brush.join.rawValue << 4)
    }
}

extension ByteReader {
    /// Reads a brush, rejecting unknown tools, caps, joins and bad widths.
    mutating func readBrush() throws(CodecError) -> Brush {
        let start = offset
        guard let tool = Brush.Tool(rawValue: try readByte()) else {
            throw CodecError(.invalidValue, "unknown tool", offset: start)
        }
        let color = Color(rgba: try readFixed32())
        let width = try readFiniteFloat("brush width")
        let ends = try readByte()
        guard let cap = Brush.Cap(rawValue: ends & 0x0F), let join = Brush.Join(rawValue: ends >> 4) else {
            throw CodecError(.invalidValue, "unknown line cap or join", offset: offset - 1)
        }
        let brush = Brush(tool: tool, color: color, width: width, cap: cap, join: join)
        guard brush.isValid else { throw CodecError(.invalidValue, "brush width \(width) out of range", offset: start) }
        return brush
    }

    /// Reads six finite Float64 coefficients.
    mutating func readAffine() throws(CodecError) -> Affine {
        Affine(
            a: try readFiniteDouble("transform a"), b: try readFiniteDouble("transform b"),
            c: try readFiniteDouble("transform c"), d: try readFiniteDouble("transform d"),
            tx: try readFiniteDouble("transform tx"), ty: try readFiniteDouble("transform ty"))
    }
}

extension ByteWriter {
    /// Appends six Float64 coefficients.
    mutating func write(affine: Affine) {
        for value in [affine.a, affine.b, affine.c, affine.d, affine.tx, affine.ty] { write(double: value) }
    }
}
