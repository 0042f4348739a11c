/// The encoded points of one stroke, kept as bytes and decoded only to render.
///
/// Points never change once a stroke is added, so merging never looks inside
/// them: documents, changes and snapshots all hold the same bytes, and a blob
/// decoded from the wire shares the storage of the message it came in.
///
/// Format (docs/crdt.md, "Points"): `n` (varint, 1…2^20), the first point
/// absolute (x, y as varints ≤ 65535, pressure as a varint ≤ 255), then for
/// n ≥ 2: one byte `kx | ky << 4`, one byte `kp` (≤ 15), the byte lengths of
/// the x, y and pressure streams (varints), and the three bit streams (MSB
/// first, each zero-padded to a byte); the blob ends exactly there. A stream
/// holds the n-1 zigzag-mapped second differences of its channel's quantized
/// values, each Rice-coded with the channel's parameter k: `q = u >> k` ones, a
/// zero, then the k low bits of u; `q ≥ 24` is written as 24 ones and the
/// 18-bit value. Pen paths are smooth, so second differences are small: about
/// 2.4 bytes per point on the benchmark traces, against 4.6 for first-order
/// varints.
///
/// Decoding is total: values wrap (x and y modulo 2^16, pressure modulo 2^8)
/// and a stream read past its end reads zeros, so any bytes that pass the
/// structural check decode to exactly n points inside the frame. That makes
/// validation O(1) (header and lengths) instead of a walk over every code; a
/// flipped bit inside a stream can only move points within the frame, and
/// transport integrity is TLS's job. `isCanonical` does the full walk.
package struct PointsBlob: Hashable, Sendable {
    /// The encoded bytes.
    package private(set) var bytes: ArraySlice<UInt8>

    /// The number of points: the varint the bytes start with (checked when
    /// the blob was made). Read, not stored: a replica keeps a blob for every
    /// stroke ever drawn, and the slice alone is 32 bytes.
    package var count: Int {
        var value = 0
        var shift = 0
        for byte in bytes {
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return value
    }

    /// Most points one stroke may have.
    package static let maximumCount = 1 << 20

    static let escapeLength = 24
    static let escapeBits = 18
    static let maximumK = 15

    private init(bytes: ArraySlice<UInt8>, count: Int) {
        assert(count >= 1 && count <= PointsBlob.maximumCount, "a stroke has 1…2^20 points")
        self.bytes = bytes
        assert(self.count == count, "the bytes start with the point count")
    }

    /// Encodes points (values are clamped to [0, 1] and quantized). O(n).
    /// - Precondition: 1 ≤ points.count ≤ `maximumCount`.
    package init(encoding points: [Point]) {
        let n = points.count
        precondition(n >= 1 && n <= PointsBlob.maximumCount, "a stroke has 1…2^20 points")
        let bytes = points.withUnsafeBufferPointer { input in
            let first = (
                PointsBlob.quantize(input[0].x, scale: 65535), PointsBlob.quantize(input[0].y, scale: 65535),
                PointsBlob.quantize(input[0].pressure, scale: 255)
            )
            guard n >= 2 else {
                return PointsBlob.assemble(count: 1, first: first, parameters: (0, 0), lengths: (0, 0, 0), streams: nil)
            }
            let codeCount = n - 1
            // Worst case per stream: n-1 codes of 42 bits, and the writer's slack.
            let streamCapacity = (codeCount * (PointsBlob.escapeLength + PointsBlob.escapeBits) + 7) / 8 + PointsBlob.slack
            return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 3 * codeCount) { codes in
                // One pass over the points: quantize, second difference and
                // zigzag all three channels, summing each channel's codes.
                var previous = (Int32(first.0), Int32(first.1), Int32(first.2))
                var previousDelta: (Int32, Int32, Int32) = (0, 0, 0)
                var sums: (UInt64, UInt64, UInt64) = (0, 0, 0)
                let codeBase = codes.baseAddress!
                for i in 1..<n {
                    let point = input[i]
                    let value = (
                        Int32(PointsBlob.quantize(point.x, scale: 65535)), Int32(PointsBlob.quantize(point.y, scale: 65535)),
                        Int32(PointsBlob.quantize(point.pressure, scale: 255))
                    )
                    let delta = (value.0 &- previous.0, value.1 &- previous.1, value.2 &- previous.2)
                    let code = (
                        PointsBlob.zigzag(delta.0 &- previousDelta.0), PointsBlob.zigzag(delta.1 &- previousDelta.1),
                        PointsBlob.zigzag(delta.2 &- previousDelta.2)
                    )
                    codeBase[i &- 1] = code.0
                    codeBase[codeCount &+ i &- 1] = code.1
                    codeBase[2 &* codeCount &+ i &- 1] = code.2
                    sums = (sums.0 &+ UInt64(code.0), sums.1 &+ UInt64(code.1), sums.2 &+ UInt64(code.2))
                    previous = value
                    previousDelta = delta
                }
                let ks = (
                    PointsBlob.riceParameter(sum: sums.0, count: codeCount), PointsBlob.riceParameter(sum: sums.1, count: codeCount),
                    PointsBlob.riceParameter(sum: sums.2, count: codeCount)
                )
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * streamCapacity) { streams in
                    let base = streams.baseAddress!
                    func write(_ channel: Int, _ k: Int) -> Int {
                        PointsBlob.writeStream(
                            UnsafeBufferPointer(start: codeBase + channel * codeCount, count: codeCount), k: k,
                            into: UnsafeMutableBufferPointer(start: base + channel * streamCapacity, count: streamCapacity))
                    }
                    let lengths = (write(0, ks.0), write(1, ks.1), write(2, ks.2))
                    return PointsBlob.assemble(
                        count: n, first: first, parameters: (ks.0 | ks.1 << 4, ks.2), lengths: lengths,
                        streams: (UnsafeRawPointer(base), streamCapacity))
                }
            }
        }
        self.init(bytes: bytes[...], count: n)
    }

    @inline(__always)
    private static func zigzag(_ value: Int32) -> UInt32 { UInt32(bitPattern: (value &<< 1) ^ (value &>> 31)) }

    /// The Rice parameter from the mean code: within 1.3% of the best one on
    /// the benchmark traces, at the cost of one sum.
    @inline(__always)
    private static func riceParameter(sum: UInt64, count: Int) -> Int {
        min((sum / UInt64(count) &* 69 / 100).bitWidthUsed, maximumK)
    }

    /// The blob's bytes in one allocation of their exact size: the header,
    /// then each channel's stream (`lengths` bytes at `streams.base` +
    /// channel × `streams.stride`).
    private static func assemble(
        count n: Int, first: (UInt32, UInt32, UInt32), parameters: (Int, Int), lengths: (Int, Int, Int),
        streams: (base: UnsafeRawPointer, stride: Int)?
    ) -> [UInt8] {
        // The count and first x and y take at most 3 bytes each, the first
        // pressure 2, the parameters 2, and a stream's length (< 2^20 × 42
        // bits) at most 4.
        let headerCapacity = 3 * 3 + 2 + 2 + 3 * 4
        let total = headerCapacity + lengths.0 + lengths.1 + lengths.2
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var position = 0
            func put(_ value: UInt64) {
                var value = value
                while value >= 0x80 {
                    buffer[position] = UInt8(truncatingIfNeeded: value) | 0x80
                    position &+= 1
                    value >>= 7
                }
                buffer[position] = UInt8(truncatingIfNeeded: value)
                position &+= 1
            }
            put(UInt64(n))
            put(UInt64(first.0))
            put(UInt64(first.1))
            put(UInt64(first.2))
            if let streams {
                buffer[position] = UInt8(parameters.0)
                buffer[position + 1] = UInt8(parameters.1)
                position += 2
                put(UInt64(lengths.0))
                put(UInt64(lengths.1))
                put(UInt64(lengths.2))
                func copy(_ channel: Int, _ length: Int) {
                    UnsafeMutableRawPointer(buffer.baseAddress! + position)
                        .copyMemory(from: streams.base + channel * streams.stride, byteCount: length)
                    position += length
                }
                copy(0, lengths.0)
                copy(1, lengths.1)
                copy(2, lengths.2)
            }
            initialized = position
        }
    }

    /// Rice-codes values MSB first into `output`; returns the bytes written.
    /// Bits gather at the top of a 64-bit register; after each code the
    /// register is stored whole and the position moves past the complete
    /// bytes, so no branch depends on where a byte ends. `output` needs
    /// `slack` bytes beyond what the codes take.
    private static func writeStream(_ codes: UnsafeBufferPointer<UInt32>, k: Int, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var register: UInt64 = 0
        var filled = 0  // bits held at the top of `register`, < 8 between codes
        var position = 0
        let base = UnsafeMutableRawPointer(output.baseAddress!)
        @inline(__always) func put(_ value: UInt64, _ bits: Int) {
            // filled < 8 and bits ≤ 32, so the bits fit.
            register |= value &<< UInt64(64 &- filled &- bits)
            filled &+= bits
            (base + position).storeBytes(of: register.bigEndian, as: UInt64.self)
            let complete = filled &>> 3
            position &+= complete
            register = register &<< UInt64(complete &<< 3)
            filled &= 7
        }
        let lowMask = (UInt64(1) &<< UInt64(k)) &- 1
        for value in codes {
            let q = Int(value &>> UInt32(k))
            if q < escapeLength {
                // q ones and a zero, then the k low bits: one put for the
                // usual short code, two for a long one (up to 40 bits).
                let unary = ((UInt64(1) &<< UInt64(q)) &- 1) &<< 1
                let bits = q &+ 1 &+ k
                if bits <= 32 {
                    put(unary &<< UInt64(k) | UInt64(value) & lowMask, bits)
                } else {
                    put(unary, q &+ 1)
                    put(UInt64(value) & lowMask, k)
                }
            } else {
                put((UInt64(1) &<< UInt64(escapeLength)) &- 1, escapeLength)
                put(UInt64(value) & ((1 << UInt64(escapeBits)) - 1), escapeBits)
            }
        }
        // The last, partial byte was stored with its zero padding.
        return position &+ (filled > 0 ? 1 : 0)
    }

    /// Bytes `writeStream` may write past the end of its codes.
    private static let slack = 8

    /// Checks the structure of encoded points: the header's values are in
    /// range and the three streams fill the rest of the bytes exactly. O(1).
    /// - Throws: `CodecError` for truncated, oversized or out-of-range headers.
    package init(validating bytes: ArraySlice<UInt8>) throws(CodecError) {
        let header = try PointsBlob.readHeader(bytes)
        self.init(bytes: bytes, count: header.count)
    }

    /// Switches to the same bytes held in other storage (e.g. inside the
    /// encoded change that carries this blob).
    mutating func share(_ other: ArraySlice<UInt8>) {
        assert(other == bytes, "shared bytes differ")
        self = PointsBlob(bytes: other, count: count)
    }

    /// The points, decoded. O(n); never fails (see the type's documentation).
    package func points() -> [Point] {
        let values = quantizedValues()
        let n = count
        var points: [Point] = []
        points.reserveCapacity(n)
        for i in 0..<n {
            points.append(
                Point(
                    x: Double(values[i]) / 65535, y: Double(values[n + i]) / 65535,
                    pressure: Double(values[2 * n + i]) / 255))
        }
        return points
    }

    /// Whether the streams hold exactly n-1 codes each, with no value wrapping
    /// and only zero padding: what the encoder writes. O(n).
    package var isCanonical: Bool {
        guard let header = try? PointsBlob.readHeader(bytes) else { return false }
        guard header.count > 1 else { return true }
        return bytes.withUnsafeBytes { raw in
            let streams = PointsBlob.streams(raw, header)
            var channels = (BitStream(streams.0, k: header.ks.0), BitStream(streams.1, k: header.ks.1), BitStream(streams.2, k: header.ks.2))
            let limits: (Int32, Int32, Int32) = (65535, 65535, 255)
            func check(_ stream: inout BitStream, first: Int32, limit: Int32) -> Bool {
                var value = first
                var delta: Int32 = 0
                for _ in 1..<header.count {
                    let code = stream.next()
                    guard !stream.underran else { return false }
                    delta &+= Int32(bitPattern: code &>> 1) ^ (0 &- Int32(bitPattern: code & 1))
                    value &+= delta
                    guard value >= 0 && value <= limit else { return false }
                }
                return stream.isFinished
            }
            return check(&channels.0, first: header.first.0, limit: limits.0)
                && check(&channels.1, first: header.first.1, limit: limits.1)
                && check(&channels.2, first: header.first.2, limit: limits.2)
        }
    }

    /// Channel-major quantized values: n x, then n y, then n pressure.
    private func quantizedValues() -> [Int32] {
        // Validated at construction, so the header parses.
        guard let header = try? PointsBlob.readHeader(bytes) else { preconditionFailure("points changed after validation") }
        let n = header.count
        var values = [Int32](repeating: 0, count: 3 * n)
        values[0] = header.first.0
        values[n] = header.first.1
        values[2 * n] = header.first.2
        guard n > 1 else { return values }
        bytes.withUnsafeBytes { raw in
            let streams = PointsBlob.streams(raw, header)
            values.withUnsafeMutableBufferPointer { output in
                let masks: [Int32] = [0xFFFF, 0xFFFF, 0xFF]
                for channel in 0..<3 {
                    var stream = BitStream(
                        channel == 0 ? streams.0 : channel == 1 ? streams.1 : streams.2,
                        k: channel == 0 ? header.ks.0 : channel == 1 ? header.ks.1 : header.ks.2)
                    let base = channel * n
                    let mask = masks[channel]
                    var value = output[base]
                    var delta: Int32 = 0
                    for i in 1..<n {
                        let code = stream.next()
                        delta &+= Int32(bitPattern: code &>> 1) ^ (0 &- Int32(bitPattern: code & 1))
                        value = (value &+ delta) & mask
                        output[base + i] = value
                    }
                }
            }
        }
        return values
    }

    /// The parsed header of a blob.
    struct Header {
        var count: Int
        var first: (Int32, Int32, Int32)
        var ks: (Int, Int, Int)
        /// Byte lengths of the x, y and pressure streams.
        var lengths: (Int, Int, Int)
        /// Offset of the first stream from the start of the blob.
        var streamsOffset: Int
    }

    /// Every stroke a change, a snapshot or a merge brings is checked here:
    /// the header is read straight from the bytes, and anything unusual
    /// (a bad value, a varint longer than three bytes) is read again by
    /// `checkedHeader`, which says what is wrong.
    private static func readHeader(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> Header {
        if let header = quickHeader(bytes) { return header }
        return try checkedHeader(bytes)
    }

    /// The header if the bytes hold a valid one and its varints are at most
    /// three bytes each (a count or a stream length up to 2^21 - 1); else nil.
    /// Gives what `checkedHeader` gives whenever it gives anything.
    static func quickHeader(_ bytes: ArraySlice<UInt8>) -> Header? {
        bytes.withUnsafeBytes { raw -> Header? in
            let end = raw.count
            var position = 0
            // At most three bytes; nil past the end or for a longer one.
            // Unrolled: seven of them per stroke received.
            @inline(__always) func varint() -> Int? {
                guard position < end else { return nil }
                let first = Int(raw[position])
                position &+= 1
                if first < 0x80 { return first }
                guard position < end else { return nil }
                let second = Int(raw[position])
                position &+= 1
                if second < 0x80 { return first & 0x7F | second << 7 }
                guard position < end else { return nil }
                let third = Int(raw[position])
                position &+= 1
                return third < 0x80 ? first & 0x7F | (second & 0x7F) << 7 | third << 14 : nil
            }
            guard let n = varint(), n > 0, n <= maximumCount, let x = varint(), x <= 65535, let y = varint(), y <= 65535,
                let pressure = varint(), pressure <= 255
            else { return nil }
            let first = (Int32(x), Int32(y), Int32(pressure))
            guard n > 1 else {
                return position == end ? Header(count: 1, first: first, ks: (0, 0, 0), lengths: (0, 0, 0), streamsOffset: position) : nil
            }
            guard end - position >= 2 else { return nil }
            let kxy = Int(raw[position])
            let kp = Int(raw[position + 1])
            position += 2
            guard kp <= maximumK, let lx = varint(), let ly = varint(), let lp = varint(), lx + ly + lp == end - position else { return nil }
            let ks = (kxy & 0x0F, kxy >> 4, kp)
            guard (n - 1) * (ks.0 + 1) <= 8 * lx, (n - 1) * (ks.1 + 1) <= 8 * ly, (n - 1) * (ks.2 + 1) <= 8 * lp else { return nil }
            return Header(count: n, first: first, ks: ks, lengths: (lx, ly, lp), streamsOffset: position)
        }
    }

    /// The header, or what is wrong with it.
    static func checkedHeader(_ bytes: ArraySlice<UInt8>) throws(CodecError) -> Header {
        var reader = ByteReader(bytes)
        let n = Int(try reader.readVarint(max: UInt64(maximumCount), "point count"))
        guard n > 0 else { throw CodecError(.invalidValue, "a stroke has no points") }
        let first = (
            Int32(try reader.readVarint(max: 65535, "first x")), Int32(try reader.readVarint(max: 65535, "first y")),
            Int32(try reader.readVarint(max: 255, "first pressure"))
        )
        guard n > 1 else {
            try reader.expectEnd("a one-point stroke")
            return Header(count: 1, first: first, ks: (0, 0, 0), lengths: (0, 0, 0), streamsOffset: reader.offset)
        }
        let kxy = try reader.readByte()
        let kp = Int(try reader.readByte())
        guard kp <= maximumK else { throw CodecError(.invalidValue, "pressure parameter \(kp) > \(maximumK)") }
        let lengths = (try reader.readCount("x stream"), try reader.readCount("y stream"), try reader.readCount("pressure stream"))
        let ks = (Int(kxy & 0x0F), Int(kxy >> 4), kp)
        // A code takes at least k+1 bits, so the streams bound the count: a few
        // bytes cannot claim a million points and make rendering allocate for them.
        for (length, k) in [(lengths.0, ks.0), (lengths.1, ks.1), (lengths.2, ks.2)] where (n - 1) * (k + 1) > 8 * length {
            throw CodecError(.invalidValue, "\(n) points cannot fit in a \(length)-byte stream")
        }
        guard lengths.0 + lengths.1 + lengths.2 == reader.remaining else {
            throw CodecError(
                reader.remaining < lengths.0 + lengths.1 + lengths.2 ? .truncated : .trailingBytes,
                "point streams of \(lengths.0 + lengths.1 + lengths.2) bytes in \(reader.remaining)", offset: reader.offset)
        }
        return Header(count: n, first: first, ks: ks, lengths: lengths, streamsOffset: reader.offset)
    }

    private static func streams(
        _ raw: UnsafeRawBufferPointer, _ header: Header
    ) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
        let a = header.streamsOffset
        let b = a + header.lengths.0
        let c = b + header.lengths.1
        return (
            UnsafeRawBufferPointer(rebasing: raw[a..<b]), UnsafeRawBufferPointer(rebasing: raw[b..<c]),
            UnsafeRawBufferPointer(rebasing: raw[c..<(c + header.lengths.2)])
        )
    }

    /// The points as a flat `[x, y, pressure, …]` array.
    package func flatValues() -> [Double] {
        var values: [Double] = []
        values.reserveCapacity(count * 3)
        for point in points() { values += [point.x, point.y, point.pressure] }
        return values
    }

    /// Rounds a clamped value to the nearest step (halves away from zero).
    /// Branch-free: NaN and values below 0 give 0, values above 1 `scale`.
    @inline(__always)
    static func quantize(_ value: Double, scale: Double) -> UInt32 {
        let clamped = value > 0 ? (value < 1 ? value : 1) : 0
        return UInt32(clamped * scale + 0.5)
    }
}

/// One channel's Rice-coded stream, read MSB first through a 64-bit window.
/// Past its end it reads zero bits, so reading never fails.
private struct BitStream {
    let raw: UnsafeRawBufferPointer
    let k: Int
    var position = 0
    var window: UInt64 = 0  // left-aligned; bits past `available` are zero
    var available = 0  // bits of the stream in `window`
    /// Set once a code needed more bits than the stream had.
    var underran = false

    init(_ raw: UnsafeRawBufferPointer, k: Int) {
        self.raw = raw
        self.k = k
    }

    /// The next code.
    @inline(__always)
    mutating func next() -> UInt32 {
        while available <= 56 && position < raw.count {
            window |= UInt64(raw[position]) &<< UInt64(56 &- available)
            available &+= 8
            position &+= 1
        }
        let ones = min((~window).leadingZeroBitCount, PointsBlob.escapeLength)
        let code: UInt32
        let used: Int
        if ones < PointsBlob.escapeLength {
            used = ones &+ 1 &+ k
            let low = k == 0 ? 0 : UInt32(truncatingIfNeeded: (window &<< UInt64(ones &+ 1)) &>> UInt64(64 &- k))
            code = UInt32(truncatingIfNeeded: ones) &<< UInt32(k) | low
        } else {
            used = PointsBlob.escapeLength + PointsBlob.escapeBits
            code = UInt32(truncatingIfNeeded: (window &<< UInt64(PointsBlob.escapeLength)) &>> UInt64(64 - PointsBlob.escapeBits))
        }
        if used > available { underran = true }
        window = window &<< UInt64(used)
        available = max(available &- used, 0)
        return code
    }

    /// Whether the whole stream was read with nothing but zero padding left.
    var isFinished: Bool { position == raw.count && available < 8 && window == 0 }
}

extension UInt64 {
    /// The number of bits needed to write the value (0 for 0).
    fileprivate var bitWidthUsed: Int { 64 - leadingZeroBitCount }
}
