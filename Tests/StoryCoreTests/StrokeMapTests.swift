import StoryTestSupport
import Testing

@testable import StoryCore

@Suite struct StrokeMapTests {
    private static func entry(_ key: OpID, erased: Bool = false) -> StrokeEntry {
        var entry = StrokeEntry(value: StrokeValue(content: key, brush: Brush()), id: key)
        entry.isErased = erased
        return entry
    }

    /// Mostly a stroke as drawn (content and stamps its key), else one that
    /// was restyled, erased by a later operation, transformed or put with
    /// another's points: every field must come back as it was put.
    private static func randomEntry(_ key: OpID, clock: UInt64, using random: inout SeededGenerator) -> StrokeEntry {
        let brush = Brush(
            tool: Brush.Tool.allCases.randomElement(using: &random)!, color: Color(rgba: UInt32.random(in: 0...UInt32.max, using: &random)),
            width: Float.random(in: 0...0.1, using: &random))
        var entry = StrokeEntry(value: StrokeValue(content: key, brush: brush), id: key)
        func later() -> OpID {
            OpID(counter: clock + UInt64.random(in: 1...9, using: &random), replica: ReplicaID(UInt64.random(in: 1...3, using: &random)))
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            entry.isErased = true
            entry.stamp = later()
        case 1:
            entry.value.transform = .translation(x: Double.random(in: -1...1, using: &random), y: 0.25)
        case 2:
            entry.value.content = later()
            entry.valueStamp = later()
            entry.stamp = entry.valueStamp
        case 3:
            entry.isErased = true
        default:
            break
        }
        return entry
    }

    /// A row is a key, a brush and a flag, with a reference to what differs.
    @Test func aRowIsFortyBytes() {
        #expect(MemoryLayout<StrokeMap.Row>.stride == 40)
    }

    /// A replica keeps a row for every stroke ever drawn, so the chunks grow
    /// by a quarter instead of doubling, and a split leaves both halves at
    /// their size: room for at most a quarter more rows (and a few per chunk),
    /// whether the strokes came in order or late.
    @Test(arguments: [false, true])
    func chunksKeepLittleUnusedRoom(late: Bool) {
        var random = SeededGenerator(seed: late ? 11 : 12)
        var map = StrokeMap()
        var keys = (1...3_000).map { OpID(counter: UInt64($0) * 4, replica: ReplicaID(UInt64($0 % 3 + 1))) }
        if late { keys.shuffle(using: &random) }
        for (index, key) in keys.enumerated() {
            #expect(map.putDrawn(with: Brush(), under: key) == nil)
            if index % 97 == 0 || index == keys.count - 1 {
                let (rows, chunks) = map.reserved
                #expect(rows >= map.count)
                #expect(rows <= map.count + map.count / 4 + 8 * chunks, "\(rows) rows of room for \(map.count) strokes in \(chunks) chunks")
            }
        }
        #expect(map.count == keys.count)
        #expect(map.keys == keys.sorted())
    }

    /// The map must answer as a dictionary would and iterate in key order,
    /// whatever the order of writes: mostly the newest key (a stroke drawn),
    /// late keys anywhere (another replica's strokes, a merge), which split
    /// chunks, replacements (a put, an erase) and removals (a rollback).
    @Test(arguments: 0..<12)
    func itAnswersAsADictionaryWouldAndIteratesInKeyOrder(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var map = StrokeMap()
        var model: [OpID: StrokeEntry] = [:]
        var clock: UInt64 = 0
        for _ in 0..<(5 * StrokeMap.maximumChunk) {
            let key: OpID
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<10:
                clock += UInt64.random(in: 1...4, using: &random)
                key = OpID(counter: clock, replica: ReplicaID(UInt64.random(in: 1...3, using: &random)))
            case 10..<15:
                key = OpID(counter: UInt64.random(in: 0...(clock + 1), using: &random), replica: ReplicaID(UInt64.random(in: 1...3, using: &random)))
            case 15..<17:
                guard let existing = model.keys.randomElement(using: &random) else { continue }
                key = existing
            default:
                let victim = model.keys.randomElement(using: &random) ?? OpID(counter: 1, replica: ReplicaID(1))
                map[victim] = nil
                model[victim] = nil
                continue
            }
            if Bool.random(using: &random) {
                // As a stroke is drawn: the entry `StrokeEntry(value:id:)` makes.
                let brush = Brush(color: Color(rgba: UInt32.random(in: 0...UInt32.max, using: &random)))
                #expect(map.putDrawn(with: brush, under: key) == model[key])
                model[key] = StrokeEntry(value: StrokeValue(content: key, brush: brush), id: key)
                continue
            }
            let entry = Self.randomEntry(key, clock: clock, using: &random)
            #expect(map.put(entry, under: key) == model[key])
            model[key] = entry
            if Int.random(in: 0..<50, using: &random) == 0 {
                // In place, as an erase writes.
                map[key]!.isErased.toggle()
                model[key]!.isErased.toggle()
            }
        }
        #expect(map.count == model.count)
        #expect(map.isEmpty == model.isEmpty)
        #expect(map.keys == model.keys.sorted())
        for (key, entry) in map { #expect(model[key] == entry) }
        for (key, entry) in model { #expect(map[key] == entry) }
        for counter in [0, clock + 1, UInt64.max] {
            let absent = OpID(counter: counter, replica: ReplicaID(9))
            #expect(map[absent] == nil)
        }
        var rebuilt = StrokeMap()
        for (key, entry) in model.shuffled(using: &random) { rebuilt[key] = entry }
        #expect(rebuilt == map)
        if let any = model.keys.first {
            rebuilt[any]!.stamp = OpID(counter: UInt64.max, replica: ReplicaID(1))
            #expect(rebuilt != map)
        }
    }

    @Test func aLiteralBuildsTheMap() {
        let a = OpID(counter: 5, replica: ReplicaID(2))
        let b = OpID(counter: 3, replica: ReplicaID(9))
        let map: StrokeMap = [a: Self.entry(a), b: Self.entry(b, erased: true)]
        #expect(map.keys == [b, a])
        #expect(map[b]?.isErased == true)
        #expect(StrokeMap().isEmpty)
    }
}
