/// The value stored under one stroke key of a layer: which points (by the id
/// of the operation that brought them), drawn with which brush, through which
/// transform.
///
/// A lasso move composes a transform and a recolour swaps the brush; neither
/// copies points. Duplicated shots and undone erases reference the same
/// content, so point bytes are never copied in memory or on the wire.
package struct StrokeValue: Hashable, Sendable {
    /// The id of the `addStroke` operation whose points this value draws.
    package var content: OpID
    package var brush: Brush
    /// Most strokes are never transformed, so the six coefficients live in a
    /// box: a stroke entry stays 80 bytes instead of 128.
    private var transformBox: TransformBox?

    /// Creates a value.
    package init(content: OpID, brush: Brush, transform: Affine? = nil) {
        self.content = content
        self.brush = brush
        self.transform = transform
    }

    /// Applied to the points when drawing; nil is the identity.
    package var transform: Affine? {
        get { transformBox?.affine }
        set { transformBox = newValue.flatMap { $0 == .identity ? nil : TransformBox(affine: $0) } }
    }

    package static func == (lhs: StrokeValue, rhs: StrokeValue) -> Bool {
        lhs.content == rhs.content && lhs.brush == rhs.brush && lhs.transform == rhs.transform
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(content)
        hasher.combine(brush)
        hasher.combine(transform)
    }
}

/// An immutable boxed transform (shared between copies of a value).
private final class TransformBox: Sendable {
    let affine: Affine

    init(affine: Affine) {
        self.affine = affine
    }
}
