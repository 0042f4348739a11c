/// The value stored under one stroke key of a layer: which points (by the id
/// of the operation that brought them), drawn with which brush, through which
/// transform.
///
/// A lasso move composes a transform and a recolour swaps the brush; neither
/// copies points. Duplicated shots and undone erases reference the same
/// content, so point bytes are never copied in memory or on the wire.
public struct StrokeValue: Hashable, Sendable {
    /// The id of the `addStroke` operation whose points this value draws.
    public var content: OpID
    public var brush: Brush
    /// Applied to the points when drawing; nil is the identity.
    public var transform: Affine?

    /// Creates a value.
    public init(content: OpID, brush: Brush, transform: Affine? = nil) {
        self.content = content
        self.brush = brush
        self.transform = transform == .identity ? nil : transform
    }
}
