/// An sRGB colour with alpha, 8 bits per channel.
package struct Color: Hashable, Sendable, CustomStringConvertible {
    /// Red, green, blue and alpha packed as 0xRRGGBBAA.
    package var rgba: UInt32

    /// Wraps a packed 0xRRGGBBAA value.
    package init(rgba: UInt32) {
        self.rgba = rgba
    }

    /// Creates a colour from its channels.
    package init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        rgba = UInt32(red) << 24 | UInt32(green) << 16 | UInt32(blue) << 8 | UInt32(alpha)
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` (the `#` is optional, case-insensitive).
    package init?(hex: String) {
        // Over the string's UTF-8 bytes: `Character` iteration and
        // `UInt32(_:radix:)` took about a microsecond a colour, and iterating
        // a generic view byte by byte across modules more still, on every
        // stroke an edit adds.
        var text = hex
        guard let rgba = text.withUTF8(Self.parseHex) else { return nil }
        self.rgba = rgba
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` from a substring or other text.
    package init?(hex: some StringProtocol) { self.init(hex: String(hex)) }

    /// `RRGGBB` (opaque) or `RRGGBBAA`, after an optional `#`.
    private static func parseHex(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var digits = bytes[...]
        if digits.first == UInt8(ascii: "#") { digits = digits.dropFirst() }
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var value: UInt32 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return digits.count == 6 ? value << 8 | 0xFF : value
    }

    package static let black = Color(rgba: 0x0000_00FF)
    package static let white = Color(rgba: 0xFFFF_FFFF)

    package var red: UInt8 { UInt8(truncatingIfNeeded: rgba >> 24) }
    package var green: UInt8 { UInt8(truncatingIfNeeded: rgba >> 16) }
    package var blue: UInt8 { UInt8(truncatingIfNeeded: rgba >> 8) }
    package var alpha: UInt8 { UInt8(truncatingIfNeeded: rgba) }

    /// `#RRGGBB` when opaque, else `#RRGGBBAA` (uppercase).
    package var description: String { alpha == 255 ? hexString(rgba >> 8, digits: 6) : hexString(rgba, digits: 8) }

    /// `#RRGGBBAA` always.
    package var hexRGBA: String { hexString(rgba, digits: 8) }

    private func hexString(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: digits - text.count) + text
    }
}
