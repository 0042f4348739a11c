/// An sRGB colour with alpha, 8 bits per channel.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    /// Red, green, blue and alpha packed as 0xRRGGBBAA.
    public var rgba: UInt32

    /// Wraps a packed 0xRRGGBBAA value.
    public init(rgba: UInt32) {
        self.rgba = rgba
    }

    /// Creates a colour from its channels.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        rgba = UInt32(red) << 24 | UInt32(green) << 16 | UInt32(blue) << 8 | UInt32(alpha)
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` (the `#` is optional, case-insensitive).
    public init?(hex: some StringProtocol) {
        var digits = Substring(hex)
        if digits.first == "#" { digits = digits.dropFirst() }
        guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
            let value = UInt32(digits, radix: 16)
        else { return nil }
        rgba = digits.count == 6 ? value << 8 | 0xFF : value
    }

    public static let black = Color(rgba: 0x0000_00FF)
    public static let white = Color(rgba: 0xFFFF_FFFF)

    public var red: UInt8 { UInt8(truncatingIfNeeded: rgba >> 24) }
    public var green: UInt8 { UInt8(truncatingIfNeeded: rgba >> 16) }
    public var blue: UInt8 { UInt8(truncatingIfNeeded: rgba >> 8) }
    public var alpha: UInt8 { UInt8(truncatingIfNeeded: rgba) }

    /// `#RRGGBB` when opaque, else `#RRGGBBAA` (uppercase).
    public var description: String { alpha == 255 ? hexString(rgba >> 8, digits: 6) : hexString(rgba, digits: 8) }

    /// `#RRGGBBAA` always.
    public var hexRGBA: String { hexString(rgba, digits: 8) }

    private func hexString(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: digits - text.count) + text
    }
}
