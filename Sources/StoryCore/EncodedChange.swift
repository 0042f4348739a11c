/// A change as bytes, with the header fields needed to route and order it.
/// This is what logs keep and what travels on the wire. Two are equal when
/// their bytes are.
package struct EncodedChange: Hashable, Sendable {
    /// The encoded change.
    package let bytes: ArraySlice<UInt8>
    package let replica: ReplicaID
    package let seq: UInt64
    package let startCounter: UInt64
    /// The last operation's counter, read from the header when asked (a
    /// log read for a sync never asks: not stored, 16 bytes less to copy
    /// per change read).
    package var endCounter: UInt64 { Self.headerFields(of: bytes).endCounter }
    /// When the change was made, read from the header when asked.
    package var wallTime: Int64 { Self.headerFields(of: bytes).wallTime }
    /// The author's signature of its chain up to this change, when it came
    /// with it (it travels only where a receiver checks it: `ChangeBatch.encode`).
    package let signature: [UInt8]?
    /// Whether this daemon checked (or made) this change's own signature, not
    /// only a later one in its chain: a sender ends every replica's run in a
    /// batch at such a change, so the receiver's check of that signature passes.
    package internal(set) var isAnchor = false

    /// `bytes` must encode a change with these header fields.
    init(
        bytes: ArraySlice<UInt8>, replica: ReplicaID, seq: UInt64, startCounter: UInt64,
        signature: [UInt8]? = nil, isAnchor: Bool = false
    ) {
        self.bytes = bytes
        self.replica = replica
        self.seq = seq
        self.startCounter = startCounter
        self.signature = signature
        self.isAnchor = isAnchor
    }

    package static func == (lhs: EncodedChange, rhs: EncodedChange) -> Bool { lhs.bytes == rhs.bytes }
    package func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// What the chain hash covers: the bytes (the signature is beside them).
    var body: ArraySlice<UInt8> { bytes }

    /// The same change with another signature beside it (nil: none).
    package func withSignature(_ signature: [UInt8]?) -> EncodedChange {
        EncodedChange(
            bytes: bytes, replica: replica, seq: seq, startCounter: startCounter, signature: signature, isAnchor: isAnchor)
    }

    /// The same change marked as checked (or not) by this daemon (as a store
    /// reads it back).
    package func markedAnchor(_ anchor: Bool) -> EncodedChange {
        var copy = self
        copy.isAnchor = anchor
        return copy
    }

    /// Decodes the change. O(size).
    /// - Throws: `CodecError`.
    package func decoded() throws(CodecError) -> Change {
        var change = try Change(decoding: bytes)
        change.signature = signature
        return change
    }

    /// Decodes `bytes` and keeps them as the encoding.
    /// - Throws: `CodecError`.
    package static func decoding(_ bytes: ArraySlice<UInt8>, signature: [UInt8]? = nil) throws(CodecError) -> (EncodedChange, Change) {
        var change = try Change(decoding: bytes)
        change.signature = signature
        return (EncodedChange(bytes: bytes, of: change), change)
    }

    /// An empty encoding, replaced before use (`ChangeBatch.decodeReceived`).
    static let placeholder = EncodedChange(bytes: [], replica: .reserved, seq: 0, startCounter: 0)

    /// `bytes`, the encoding of `change`, with its header fields and signature.
    init(bytes: ArraySlice<UInt8>, of change: borrowing Change) {
        self.init(
            bytes: bytes, replica: change.replica, seq: change.seq, startCounter: change.startCounter,
            signature: change.signature)
    }

    /// Causal order for sending: by start counter, then replica. A dependency
    /// always has a smaller counter (Lamport), so this order respects causality.
    static func causalOrder(_ a: EncodedChange, _ b: EncodedChange) -> Bool {
        a.startCounter != b.startCounter ? a.startCounter < b.startCounter : a.replica < b.replica
    }
}

extension EncodedChange {
    /// The counters and wall time of the change encoded in `bytes`, read from
    /// its header (`ChangeLog` keeps changes without their header fields).
    /// - Precondition: `bytes` decoded as a change before.
    static func headerFields(of bytes: ArraySlice<UInt8>) -> (startCounter: UInt64, endCounter: UInt64, wallTime: Int64) {
        bytes.withUnsafeBufferPointer { bytes in
            var header = HeaderScan(bytes)
            let startCounter = header.varint()
            let wallTime = ByteWriter.unzigzag(header.varint())
            for _ in 0..<header.varint() {
                _ = header.varint()
                _ = header.varint()
            }
            if header.hasDeclaration { header.skip(Int(header.varint()) + 8) }
            let opCount = header.varint()
            return (startCounter, startCounter + max(opCount, 1) - 1, wallTime)
        }
    }

    /// The first counter of the change encoded in `bytes` (its header's
    /// first field: what a log read for sending needs, without the rest).
    /// - Precondition: `bytes` decoded as a change before.
    static func startCounter(of bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBufferPointer { bytes in
            var header = HeaderScan(bytes)
            return header.varint()
        }
    }

    /// A reader of a logged change's header, past the format version, flags,
    /// replica table and sequence number: at the first counter (the layout
    /// `Change.read` reads and checked). Every read is bounds-checked.
    private struct HeaderScan {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        let hasDeclaration: Bool

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            precondition(bytes.count >= 2, "a logged change is too short to read")
            let version = bytes[0]
            hasDeclaration = version != 1 && bytes[1] & Change.Flag.declaration != 0
            position = version == 1 ? 1 : 2
            skip(8 * Int(varint()))
            skipVarint()
        }

        /// Inlined, with a one-byte value read at once: a call per field
        /// was half the instructions of a scan.
        @inline(__always)
        mutating func varint() -> UInt64 {
            precondition(position < bytes.count, "a logged change's header no longer reads")
            let first = bytes[position]
            if first < 0x80 {
                position &+= 1
                return UInt64(first)
            }
            return longVarint()
        }

        private mutating func longVarint() -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                precondition(position < bytes.count && shift < 64, "a logged change's header no longer reads")
                let byte = bytes[position]
                position += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
            }
        }

        /// Steps over a varint (the sequence number, which the log knows)
        /// without decoding it: a sequence number past 127 took the long read.
        @inline(__always)
        mutating func skipVarint() {
            while true {
                precondition(position < bytes.count, "a logged change's header no longer reads")
                let byte = bytes[position]
                position &+= 1
                if byte < 0x80 { return }
            }
        }

        mutating func skip(_ count: Int) {
            precondition(count >= 0 && count <= bytes.count - position, "a logged change's header no longer reads")
            position += count
        }
    }
}
