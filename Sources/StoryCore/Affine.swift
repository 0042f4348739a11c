/// A 2×3 affine transform in the unit square of the frame:
/// `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty` (the CSS/SVG `matrix(a b c d tx ty)`).
package struct Affine: Hashable, Sendable {
    package var a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double

    /// Creates a transform from its six coefficients.
    package init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    /// The transform that changes nothing.
    package static let identity = Affine(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    /// A translation.
    package static func translation(x: Double, y: Double) -> Affine {
        Affine(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }

    /// A scale about the origin.
    package static func scale(x: Double, y: Double) -> Affine {
        Affine(a: x, b: 0, c: 0, d: y, tx: 0, ty: 0)
    }

    /// A rotation about the origin by `radians`, counter-clockwise in a y-up frame.
    package static func rotation(_ radians: Double) -> Affine {
        let (sine, cosine) = (radians.sin, radians.cos)
        return Affine(a: cosine, b: sine, c: -sine, d: cosine, tx: 0, ty: 0)
    }

    /// Whether this is exactly the identity.
    package var isIdentity: Bool { self == .identity }

    /// Whether all six coefficients are finite.
    package var isFinite: Bool { [a, b, c, d, tx, ty].allSatisfy(\.isFinite) }

    /// `other` applied after `self` (first `self`, then `other`).
    package func followed(by other: Affine) -> Affine {
        Affine(
            a: other.a * a + other.c * b, b: other.b * a + other.d * b,
            c: other.a * c + other.c * d, d: other.b * c + other.d * d,
            tx: other.a * tx + other.c * ty + other.tx, ty: other.b * tx + other.d * ty + other.ty)
    }

    /// Maps a point (pressure unchanged).
    package func applied(to point: Point) -> Point {
        Point(x: a * point.x + c * point.y + tx, y: b * point.x + d * point.y + ty, pressure: point.pressure)
    }
}

extension Double {
    // Foundation-free sine and cosine (StoryCore imports nothing): a Taylor
    // series after reducing the angle to [-π, π], accurate to ~1e-15.
    fileprivate var sin: Double {
        var x = self.truncatingRemainder(dividingBy: 2 * Double.pi)
        if x > Double.pi { x -= 2 * Double.pi } else if x < -Double.pi { x += 2 * Double.pi }
        var term = x
        var sum = x
        for n in stride(from: 2, through: 40, by: 2) {
            term *= -x * x / Double(n * (n + 1))
            sum += term
        }
        return sum
    }

    fileprivate var cos: Double { (self + Double.pi / 2).sin }
}
