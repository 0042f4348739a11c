/// A last-writer-wins register: a value and the id of the operation that wrote it.
struct Register<Value: Hashable & Sendable>: Hashable, Sendable {
    var value: Value
    var stamp: OpID

    /// Takes `other` if it was written later. Returns whether it did.
    @discardableResult
    mutating func merge(_ other: Register<Value>) -> Bool {
        guard other.stamp > stamp else { return false }
        self = other
        return true
    }
}

/// Where an object sits: a list (the container's id) and its position entry there.
struct Place: Hashable, Sendable {
    var container: OpID
    var entry: OpID
}
