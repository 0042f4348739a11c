import Foundation
package import StoryCore

// Values of an edit from text (the CLI's arguments), checked by the same
// rules and with the same words as the daemon's decoding of the JSON.

extension API.ObjectReference {
    /// An id (`counter@replica`) or `$N`, named `field` in the error.
    /// - Throws: `APIError.badRequest`.
    package static func parse(_ text: String, field: String) throws(APIError) -> Self {
        guard let reference = Self(text.trimmingCharacters(in: .whitespaces)) else {
            throw APIError(
                .badRequest, field: field, problem: "'\(text)' is not an object id (counter@replica)",
                message: "'\(field)': '\(text)' is not an object id (counter@replica)")
        }
        return reference
    }
}

extension API.BrushPatch {
    /// A brush field that is not valid: which one, and what it must be.
    struct InvalidField: Error {
        let field: String
        let requirement: String
    }

    /// The one place the brush fields are checked, for JSON and for the command line.
    static func checked(tool: String?, color: String?, width: Double?, cap: String?, join: String?) throws(InvalidField) -> Self {
        func names<Value: CaseIterable>(_ type: Value.Type, _ name: (Value) -> String) -> String {
            "must be one of " + type.allCases.map(name).joined(separator: ", ")
        }
        var patch = Self()
        if let tool {
            guard let value = Brush.Tool(name: tool) else { throw InvalidField(field: "tool", requirement: names(Brush.Tool.self, \.name)) }
            patch.tool = value
        }
        if let color {
            guard let value = Color(hex: color) else {
                throw InvalidField(field: "color", requirement: "must be a colour like \"#000000\" or \"#000000ff\"")
            }
            patch.color = value
        }
        if let width {
            guard width.isFinite, (0...1).contains(width) else {
                throw InvalidField(field: "width", requirement: "must be in 0...1 (a fraction of the frame width)")
            }
            patch.width = Float(width)
        }
        if let cap {
            guard let value = Brush.Cap(name: cap) else { throw InvalidField(field: "cap", requirement: names(Brush.Cap.self, \.name)) }
            patch.cap = value
        }
        if let join {
            guard let value = Brush.Join(name: join) else { throw InvalidField(field: "join", requirement: names(Brush.Join.self, \.name)) }
            patch.join = value
        }
        return patch
    }

    /// The brush fields given as text (nil: unchanged).
    /// - Throws: `APIError.badRequest` naming the field.
    package init(tool: String?, color: String?, width: Double?, cap: String? = nil, join: String? = nil) throws(APIError) {
        do {
            self = try Self.checked(tool: tool, color: color, width: width, cap: cap, join: join)
        } catch {
            throw APIError.badField("brush.\(error.field)", error.requirement)
        }
    }
}

extension API.EditOperation {
    /// Points from a flat `[x, y, pressure, …]` array: a non-zero multiple of
    /// 3 numbers, at most `maximumPoints` points, finite, x and y inside the unit square, pressure in 0...1.
    /// - Throws: `APIError.badRequest` saying which rule failed.
    package static func points(flat: [Double]) throws(APIError) -> [Point] {
        guard !flat.isEmpty, flat.count % 3 == 0 else {
            throw APIError.badField("points", "must be a flat [x, y, pressure, …] array (a non-zero multiple of 3 numbers)")
        }
        guard flat.count <= 3 * maximumPoints else {
            throw APIError.badField("points", "holds \(flat.count / 3) points; at most \(maximumPoints) per stroke")
        }
        var points: [Point] = []
        points.reserveCapacity(flat.count / 3)
        for i in stride(from: 0, to: flat.count, by: 3) {
            let (x, y, p) = (flat[i], flat[i + 1], flat[i + 2])
            guard x.isFinite, y.isFinite, p.isFinite else {
                throw APIError.badField("points", "has point \(i / 3 + 1) that is not three finite numbers")
            }
            guard (0...1).contains(x), (0...1).contains(y) else {
                throw APIError.badField(
                    "points",
                    "has point \(i / 3 + 1) at x \(x), y \(y): x and y must be within 0 to 1 (the frame, as fractions of its width and height)")
            }
            guard (0...1).contains(p) else {
                throw APIError.badField("points", "has point \(i / 3 + 1) with pressure \(p): pressure must be within 0 to 1")
            }
            points.append(Point(x: x, y: y, pressure: p))
        }
        return points
    }
}
