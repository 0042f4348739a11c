/// The encoded points of one stroke, kept as bytes and decoded only to render.
///
/// Points never change once a stroke is added, so merging never looks inside
/// them: documents, changes and snapshots all hold the same bytes, and a blob
/// decoded from the wire shares the storage of the message it came in.
///
/// Format (docs/crdt.md, "Points"): `n` (varint, 1…2^20), the first point
/// absolute (x, y as varints ≤ 65535, pressure as a varint ≤ 255), then for
/// n ≥ 2 one byte `kx | ky << 4`, one byte `kp`, and a bit stream (MSB first,
/// zero-padded to a byte) holding, channel by channel (all x, all y, all
/// pressure), the zigzag-mapped second differences of the quantized values,
/// each Rice-coded with its channel's parameter k: `q = u >> k` ones, a zero,
/// then the k low bits of u; `q ≥ 24` is written as 24 ones and the 18-bit
/// value. Pen paths are smooth, so second differences are small: 2.3 bytes
/// per point on the benchmark traces, against 4.6 for first-order varints.
public struct PointsBlob: Hashable, Sendable {
    /// The encoded bytes.
    public let bytes: ArraySlice<UInt8>
    /// The number of points.
    public let count: Int

    /// Most points one stroke may have.
    public static let maximumCount = 1 << 20

    static let escapeLength = 24
    static let escapeBits = 18
    static let maximumK = 15

    private init(bytes: ArraySlice<UInt8>, count: Int) {
        self.bytes = bytes
        self.count = count
    }

    /// Encodes points (values are clamped to [0, 1] and quantized).
    /// - Precondition: 1 ≤ points.count ≤ `maximumCount`.
    public init(encoding points: some Collection<Point>) {
        precondition(!points.isEmpty && points.count <= PointsBlob.maximumCount, "a stroke has 1…2^20 points")
        let n = points.count
        var writer = ByteWriter(capacity: 8 + n * 3)
        writer.write(count: n)
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 3 * n) { q in
            var index = 0
            for point in points {
                q[index] = Int32(PointsBlob.quantize(point.x, scale: 65535))
                q[n + index] = Int32(PointsBlob.quantize(point.y, scale: 65535))
                q[2 * n + index] = Int32(PointsBlob.quantize(point.pressure, scale: 255))
                index += 1
            }
            writer.write(varint: UInt64(q[0]))
            writer.write(varint: UInt64(q[n]))
            writer.write(varint: UInt64(q[2 * n]))
            guard n >= 2 else { return }
            // Turn each channel into zigzag second differences in place, from the end.
            for channel in 0..<3 {
                let base = channel * n
                for i in stride(from: n - 1, through: 2, by: -1) {
                    let d2 = (q[base + i] - q[base + i - 1]) - (q[base + i - 1] - q[base + i - 2])
                    q[base + i] = Int32(bitPattern: UInt32(truncatingIfNeeded: ByteWriter.zigzag(Int64(d2))))
                }
                let d1 = q[base + 1] - q[base]
                q[base + 1] = Int32(bitPattern: UInt32(truncatingIfNeeded: ByteWriter.zigzag(Int64(d1))))
            }
            let kx = PointsBlob.bestK(UnsafeBufferPointer(rebasing: q[1..<n]))
            let ky = PointsBlob.bestK(UnsafeBufferPointer(rebasing: q[(n + 1)..<(2 * n)]))
            let kp = PointsBlob.bestK(UnsafeBufferPointer(rebasing: q[(2 * n + 1)..<(3 * n)]))
            writer.write(byte: UInt8(kx | ky << 4))
            writer.write(byte: UInt8(kp))
            var bits = BitWriter()
            for channel in 0..<3 {
                let k = channel == 0 ? kx : channel == 1 ? ky : kp
                for i in 1..<n {
                    bits.writeRice(UInt32(bitPattern: q[channel * n + i]), k: k)
                }
            }
            bits.flush(into: &writer)
        }
        self.init(bytes: writer.bytes[...], count: n)
    }

    /// Validates encoded points: every code present, every value in range, no
    /// bytes left over. O(n).
    /// - Throws: `CodecError` for truncated, out-of-range or trailing data.
    public init(validating bytes: ArraySlice<UInt8>) throws(CodecError) {
        let count = try PointsBlob.decode(bytes, keepingPoints: false).count
        self.init(bytes: bytes, count: count)
    }

    /// Wraps bytes already validated in this process (a snapshot whose checksum
    /// matched, written by this same codec). Only the header is parsed.
    init(trusted bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes)
        let count = try reader.readVarint(max: UInt64(PointsBlob.maximumCount), "point count")
        guard count > 0 else { throw CodecError(.invalidValue, "a stroke has no points") }
        self.init(bytes: bytes, count: Int(count))
    }

    /// The points, decoded. O(n).
    public func points() -> [Point] {
        // The blob was validated when it was made, so decoding cannot fail; a
        // failure here would mean memory corruption.
        do {
            return try PointsBlob.decode(bytes, keepingPoints: true).points
        } catch {
            preconditionFailure("validated points failed to decode: \(error)")
        }
    }

    /// The points as a flat `[x, y, pressure, …]` array.
    public func flatValues() -> [Double] {
        var values: [Double] = []
        values.reserveCapacity(count * 3)
        for point in points() { values += [point.x, point.y, point.pressure] }
        return values
    }

    @inline(__always)
    static func quantize(_ value: Double, scale: Double) -> Int {
        guard value.isFinite else { return 0 }
        return Int((min(max(value, 0), 1) * scale).rounded())
    }

    /// The Rice parameter minimizing the coded size, searched around the mean.
    private static func bestK(_ values: UnsafeBufferPointer<Int32>) -> Int {
        var sum: UInt64 = 0
        for value in values { sum += UInt64(UInt32(bitPattern: value)) }
        let mean = sum / UInt64(max(values.count, 1))
        let guess = mean == 0 ? 0 : min(64 - mean.leadingZeroBitCount - 1, maximumK)
        var bestK = guess
        var bestCost = Int.max
        for k in max(guess - 1, 0)...min(guess + 1, maximumK) {
            var cost = 0
            for value in values {
                let q = Int(UInt32(bitPattern: value) >> UInt32(k))
                cost += q < escapeLength ? q + 1 + k : escapeLength + escapeBits
            }
            if cost < bestCost {
                bestCost = cost
                bestK = k
            }
        }
        return bestK
    }

    /// Decodes a blob, or with `keepingPoints` false only validates it.
    private static func decode(_ bytes: ArraySlice<UInt8>, keepingPoints: Bool)
        throws(CodecError) -> (count: Int, points: [Point])
    {
        var reader = ByteReader(bytes)
        let n = Int(try reader.readVarint(max: UInt64(maximumCount), "point count"))
        guard n > 0 else { throw CodecError(.invalidValue, "a stroke has no points") }
        let x0 = Int32(try reader.readVarint(max: 65535, "first x"))
        let y0 = Int32(try reader.readVarint(max: 65535, "first y"))
        let p0 = Int32(try reader.readVarint(max: 255, "first pressure"))
        if n == 1 {
            try reader.expectEnd("a one-point stroke")
            let point = Point(x: Double(x0) / 65535, y: Double(y0) / 65535, pressure: Double(p0) / 255)
            return (1, keepingPoints ? [point] : [])
        }
        let kxy = try reader.readByte()
        let kp = Int(try reader.readByte())
        var bits = BitReader(reader.base[reader.position...])
        guard keepingPoints else {
            try bits.readChannel(first: x0, count: n, k: Int(kxy & 0x0F), limit: 65535) { _, _ in }
            try bits.readChannel(first: y0, count: n, k: Int(kxy >> 4), limit: 65535) { _, _ in }
            try bits.readChannel(first: p0, count: n, k: kp, limit: 255) { _, _ in }
            try bits.finish()
            return (n, [])
        }
        var values = [Int32](repeating: 0, count: 3 * n)
        try bits.readChannel(first: x0, count: n, k: Int(kxy & 0x0F), limit: 65535) { values[$0] = $1 }
        try bits.readChannel(first: y0, count: n, k: Int(kxy >> 4), limit: 65535) { values[n + $0] = $1 }
        try bits.readChannel(first: p0, count: n, k: kp, limit: 255) { values[2 * n + $0] = $1 }
        try bits.finish()
        var points: [Point] = []
        points.reserveCapacity(n)
        for i in 0..<n {
            points.append(
                Point(
                    x: Double(values[i]) / 65535, y: Double(values[n + i]) / 65535,
                    pressure: Double(values[2 * n + i]) / 255))
        }
        return (n, points)
    }
}

/// Writes bits most significant first.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var pending = 0  // bits held in the low end of `accumulator`

    @inline(__always)
    mutating func write(_ value: UInt64, bits count: Int) {
        accumulator = (accumulator << UInt64(count)) | value
        pending += count
        while pending >= 8 {
            pending -= 8
            bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
        }
    }

    @inline(__always)
    mutating func writeRice(_ value: UInt32, k: Int) {
        let q = Int(value >> UInt32(k))
        if q < PointsBlob.escapeLength {
            // q ones, then a zero, then k low bits: at most 23 + 1 + 15 bits.
            let ones = (UInt64(1) << UInt64(q)) - 1
            let low = UInt64(value) & ((UInt64(1) << UInt64(k)) - 1)
            write((ones << UInt64(1 + k)) | low, bits: q + 1 + k)
        } else {
            write((UInt64(1) << UInt64(PointsBlob.escapeLength)) - 1, bits: PointsBlob.escapeLength)
            write(UInt64(value), bits: PointsBlob.escapeBits)
        }
    }

    mutating func flush(into writer: inout ByteWriter) {
        if pending > 0 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)))
            pending = 0
        }
        writer.write(raw: bytes)
    }
}

/// Reads bits most significant first, refilling a 64-bit window.
private struct BitReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int
    private var window: UInt64 = 0  // left-aligned
    private var available = 0

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    @inline(__always)
    private mutating func refill() {
        while available <= 56 && position < bytes.endIndex {
            window |= UInt64(bytes[position]) << UInt64(56 - available)
            available += 8
            position += 1
        }
    }

    @inline(__always)
    mutating func readRice(k: Int) throws(CodecError) -> UInt32 {
        refill()
        let ones = min((~window).leadingZeroBitCount, PointsBlob.escapeLength)
        if ones == PointsBlob.escapeLength {
            guard available >= ones + PointsBlob.escapeBits else { throw truncated() }
            window <<= UInt64(ones)
            let value = window >> UInt64(64 - PointsBlob.escapeBits)
            window <<= UInt64(PointsBlob.escapeBits)
            available -= ones + PointsBlob.escapeBits
            return UInt32(value)
        }
        guard available >= ones + 1 + k else { throw truncated() }
        window <<= UInt64(ones + 1)
        let low = k == 0 ? 0 : window >> UInt64(64 - k)
        window <<= UInt64(k)
        available -= ones + 1 + k
        return UInt32(ones) << UInt32(k) | UInt32(low)
    }

    /// Reads one channel's n-1 codes, rebuilding values from second differences
    /// and rejecting any value outside 0…limit.
    @inline(__always)
    mutating func readChannel(
        first: Int32, count n: Int, k: Int, limit: Int32, _ sink: (Int, Int32) -> Void
    ) throws(CodecError) {
        guard k <= PointsBlob.maximumK else { throw CodecError(.invalidValue, "parameter \(k) > 15") }
        var value = first
        var delta: Int32 = 0
        sink(0, value)
        for i in 1..<n {
            let d2 = Int32(truncatingIfNeeded: ByteWriter.unzigzag(UInt64(try readRice(k: k))))
            delta &+= d2
            value &+= delta
            guard value >= 0 && value <= limit && delta >= -limit && delta <= limit else {
                throw CodecError(.invalidValue, "point \(i) leaves the range 0…\(limit)")
            }
            sink(i, value)
        }
    }

    /// Checks that only zero padding of the last byte remains.
    func finish() throws(CodecError) {
        guard position == bytes.endIndex, available < 8, window == 0 else {
            throw CodecError(.trailingBytes, "points have bytes or set bits after the last code")
        }
    }

    private func truncated() -> CodecError {
        CodecError(.truncated, "points end before their last code")
    }
}
