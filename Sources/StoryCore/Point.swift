/// One sample of a pen stroke in the unit square of the shot frame.
///
/// `x` and `y` are in [0, 1] (resolution independent: the frame knows its
/// aspect ratio); `pressure` is in [0, 1]. Stored quantized: x and y to
/// 1/65535, pressure to 1/255.
package struct Point: Hashable, Sendable {
    /// Horizontal position, 0 = left edge, 1 = right edge.
    package var x: Double
    /// Vertical position, 0 = top edge, 1 = bottom edge.
    package var y: Double
    /// Pen pressure, 0 = none, 1 = full.
    package var pressure: Double

    /// Creates a point; values are clamped to [0, 1] when encoded.
    package init(x: Double, y: Double, pressure: Double = 1) {
        self.x = x
        self.y = y
        self.pressure = pressure
    }

    /// The point after quantization (what a round trip through the codec gives).
    package var quantized: Point {
        Point(
            x: Double(PointsBlob.quantize(x, scale: 65535)) / 65535,
            y: Double(PointsBlob.quantize(y, scale: 65535)) / 65535,
            pressure: Double(PointsBlob.quantize(pressure, scale: 255)) / 255)
    }
}
