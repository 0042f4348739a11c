/// How one shot's drawing was made, from a project document's change log:
/// every stroke drawn on its layers, erased, brought back (undo, restore),
/// replaced (lasso move, recolour) or placed there from elsewhere (a copy, a
/// duplicated shot), in the order the changes were made, each at the wall
/// time of its change. What `storyteller replay` plays.
///
/// The stroke maps are rebuilt by the same last-writer-wins rules as the
/// document's (`StrokeEntry.merge`), so a replay of a complete log ends
/// exactly where the document is, whatever order concurrent changes came in;
/// an event is recorded only where what a viewer sees changes (an erase
/// that lost to a later put is no event).
///
/// Compacted history: strokes the document holds on those layers whose
/// drawing is not in the log (their changes were folded into a snapshot)
/// are shown from the start, as the document holds them now
/// (`initialStrokeCount`); a stroke that is erased now and whose erase is not
/// in the log is not shown at all. Wall times come from the changes' authors'
/// clocks: a change dated before the one before it is placed at that one's
/// time, so `time` never goes backwards.
package struct ReplayTimeline: Sendable {
    /// What happened to a stroke.
    package enum EventKind: String, Hashable, Sendable {
        /// Drawn here (`addStroke`): played point by point.
        case drawn
        /// Put under a key new to this layer (a copy, a duplicated shot): appears at once.
        case placed
        /// Its value replaced while shown (lasso move, recolour, a restore to another value).
        case replaced
        /// Erased.
        case erased
        /// Shown again after an erase (undo, restore).
        case restored
    }

    /// One thing that happened to one stroke.
    package struct Event: Hashable, Sendable {
        package var kind: EventKind
        /// The layer and the stroke's key in it.
        package var layer: OpID
        package var key: OpID
        /// Wall time in milliseconds since 1970, never before the previous event's.
        package var time: Int64
        /// The change it belongs to: events of one change happen together.
        package var change: Int
        /// The stroke as shown after the event (nil once erased).
        package var stroke: StrokeView?
    }

    /// The shot as the document shows it now: its layers (order, visibility,
    /// opacity, transforms, pictures), background and fields.
    package let shot: ShotView
    /// What happened, in order.
    package let events: [Event]
    /// The strokes shown before the first event, by layer and key (drawn
    /// before the logged history began).
    package let initial: [OpID: [OpID: StrokeView]]

    /// How many strokes are shown from the start because the log does not
    /// reach back to their drawing.
    package var initialStrokeCount: Int { initial.values.reduce(0) { $0 + $1.count } }

    /// The events on layers a render draws (visible, not fully transparent, not a picture).
    package var shownEvents: [Event] {
        let shown = shownLayers
        return events.filter { shown.contains($0.layer) }
    }

    /// The layers whose strokes a render draws.
    var shownLayers: Set<OpID> {
        Set(shot.layers.filter { $0.isVisible && $0.opacity > 0 && $0.image == nil }.map(\.id))
    }

    /// Builds the replay of shot `shotID` of `document` from `changes` (its
    /// change log, or the part of it still held; any order, causal order is
    /// restored by the changes' counters). Nil when the document shows no such shot.
    /// O(operations of the changes + strokes of the shot).
    package init?(document: ProjectDocument, shot shotID: OpID, changes: [Change]) {
        guard let shot = document.view.shot(shotID) else { return nil }
        self.shot = shot
        let state = document.state
        let layers = Set(shot.layers.map(\.id))
        // Causal order: a change's counters are above those of every change it depends on.
        let ordered = changes.sorted { ($0.startCounter, $0.replica) < ($1.startCounter, $1.replica) }

        // Keys whose drawing is in the log, and keys the log puts on each of the layers.
        var loggedDrawings: Set<OpID> = []
        var loggedErases: [OpID: Set<OpID>] = [:]
        for change in ordered {
            for (index, operation) in change.operations.enumerated() {
                switch operation {
                case .addStroke:
                    loggedDrawings.insert(OpID(counter: change.startCounter + UInt64(index), replica: change.replica))
                case .eraseStroke(let layer, let key) where layers.contains(layer):
                    loggedErases[layer, default: []].insert(key)
                default: break
                }
            }
        }

        var entries: [OpID: [OpID: StrokeEntry]] = [:]
        var initial: [OpID: [OpID: StrokeView]] = [:]
        // Before every logged operation: a base stroke's registers lose to any of them.
        let baseStamp = OpID(counter: 0, replica: .reserved)
        for layer in layers {
            for (key, entry) in state.strokeMap(of: layer) where !loggedDrawings.contains(key) {
                var base = StrokeEntry(value: entry.value, id: baseStamp)
                // Erased before the log begins: never shown.
                base.isErased = entry.isErased && !(loggedErases[layer]?.contains(key) ?? false)
                entries[layer, default: [:]][key] = base
                if !base.isErased, let view = Self.view(of: base.value, key: key, in: state) {
                    initial[layer, default: [:]][key] = view
                }
            }
        }
        self.initial = initial

        var events: [Event] = []
        var time = Int64.min
        for (changeIndex, change) in ordered.enumerated() {
            time = max(time, change.wallTime)
            for (index, operation) in change.operations.enumerated() {
                let id = OpID(counter: change.startCounter + UInt64(index), replica: change.replica)
                // The stroke it touches, and the entry it puts (nil: an erase).
                let target: (layer: OpID, key: OpID, put: StrokeEntry?)
                switch operation {
                case .addStroke(let on, let brush, _) where layers.contains(on):
                    target = (on, id, StrokeEntry(value: StrokeValue(content: id, brush: brush), id: id))
                case .putStroke(let on, let stroke, let value) where layers.contains(on):
                    target = (on, stroke, StrokeEntry(value: value, id: id))
                case .eraseStroke(let on, let stroke) where layers.contains(on):
                    target = (on, stroke, nil)
                default:
                    continue
                }
                let (layer, key, put) = target
                let previous = entries[layer]?[key]
                var next: StrokeEntry
                if let put {
                    next = previous ?? put
                    next.merge(put)
                } else {
                    guard var erased = previous else { continue }
                    if id > erased.stamp {
                        erased.isErased = true
                        erased.stamp = id
                    }
                    next = erased
                }
                entries[layer, default: [:]][key] = next
                let kind: EventKind
                switch (previous?.visibleValue, next.visibleValue) {
                case (nil, nil): continue
                case (nil, .some):
                    if case .addStroke = operation {
                        kind = .drawn
                    } else {
                        kind = previous == nil ? .placed : .restored
                    }
                case (.some, nil): kind = .erased
                case (.some(let before), .some(let after)):
                    guard before != after else { continue }
                    kind = .replaced
                }
                let view = next.visibleValue.flatMap { Self.view(of: $0, key: key, in: state) }
                guard view != nil || kind == .erased else { continue }
                events.append(Event(kind: kind, layer: layer, key: key, time: time, change: changeIndex, stroke: view))
            }
        }
        self.events = events
    }

    /// A stroke as a render draws it, if its points are held.
    private static func view(of value: StrokeValue, key: OpID, in state: ProjectState) -> StrokeView? {
        guard let points = state.content(value.content) else { return nil }
        return StrokeView(
            id: key, content: value.content, brush: value.brush, transform: value.transform, points: points)
    }

    /// A cursor over the replay: the strokes shown after some events, and
    /// the shot to render with them. Advancing is O(events passed).
    /// It walks the events a render shows (`shownEvents`), as `ReplayPlayback`
    /// counts them; layers a render does not draw keep their strokes as they are now.
    package struct Cursor: Sendable {
        let shot: ShotView
        let shownLayers: Set<OpID>
        let events: [Event]
        var strokes: [OpID: [OpID: StrokeView]]
        /// How many of the shown events have been applied.
        package private(set) var applied = 0

        init(_ timeline: ReplayTimeline) {
            shot = timeline.shot
            shownLayers = timeline.shownLayers
            events = timeline.shownEvents
            strokes = timeline.initial
        }

        /// Applies events until `count` have been (never backwards).
        package mutating func advance(to count: Int) {
            while applied < min(count, events.count) {
                let event = events[applied]
                strokes[event.layer, default: [:]][event.key] = event.stroke
                applied += 1
            }
        }

        /// The shot with the strokes shown now, plus, when `progress` is
        /// given, that much of the next event's stroke (a stroke being drawn:
        /// 0.5 is the first half of its length). O(strokes of the shot).
        package func shot(drawingNext progress: Double? = nil) -> ShotView {
            var shown = strokes
            if let progress, applied < events.count, let stroke = events[applied].stroke {
                shown[events[applied].layer, default: [:]][events[applied].key] =
                    stroke.cut(atFraction: progress, aspectRatio: shot.aspectRatio)
            }
            var shot = self.shot
            for index in shot.layers.indices where shownLayers.contains(shot.layers[index].id) {
                shot.layers[index].strokes = (shown[shot.layers[index].id] ?? [:]).values.sorted { $0.id < $1.id }
            }
            return shot
        }
    }

    /// A cursor before the first event (the initial strokes shown).
    package func makeCursor() -> Cursor { Cursor(self) }
}

extension StrokeView {
    /// The stroke while it is being drawn: its points up to `fraction` of
    /// its length (measured on a frame of `aspectRatio`, as a render draws
    /// it), the last one placed between two points, its pressure too. O(points).
    package func cut(atFraction fraction: Double, aspectRatio: Double) -> StrokeView {
        let all = points.points()
        guard fraction < 1, all.count > 1 else { return self }
        let aspect = aspectRatio.isFinite && aspectRatio > 0 ? aspectRatio : ProjectView.defaultAspectRatio
        func length(_ a: Point, _ b: Point) -> Double {
            let (dx, dy) = ((b.x - a.x) * aspect, b.y - a.y)
            return (dx * dx + dy * dy).squareRoot()
        }
        var total = 0.0
        for index in 1..<all.count { total += length(all[index - 1], all[index]) }
        var kept = [all[0]]
        if total > 0 {
            var rest = max(0, fraction) * total
            for index in 1..<all.count {
                let (a, b) = (all[index - 1], all[index])
                let step = length(a, b)
                if step >= rest {
                    let t = step > 0 ? rest / step : 0
                    kept.append(
                        Point(
                            x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t,
                            pressure: a.pressure + (b.pressure - a.pressure) * t))
                    break
                }
                kept.append(b)
                rest -= step
            }
        }
        var cut = self
        cut.points = PointsBlob(encoding: kept)
        return cut
    }
}
