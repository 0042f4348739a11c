package import StoryCore

/// A replay laid out on frames: the drawing shown as it was at the start,
/// then each event at its turn, with the real pause before it divided by
/// `speed` and cut to `maxPause`; a drawn stroke grows along its length over
/// `drawingSeconds` (divided by `speed`), at least one frame; events of one
/// change happen together; the finished drawing is held `closingSeconds`.
///
/// As `Timeline` does, every moment is placed by rounding its cumulative
/// time to the nearest frame once, so the whole lasts round(seconds × fps)
/// frames and nothing drifts. Consecutive frames showing the same thing are
/// one `Segment`, so a pause costs one picture, however long it is held.
package struct ReplayPlayback: Hashable, Sendable {
    /// What some consecutive frames show.
    package struct Segment: Hashable, Sendable {
        /// How many of the timeline's events are applied.
        package var applied: Int
        /// How much of the next event's stroke is drawn, of its length (0 to 1;
        /// nil: none is being drawn).
        package var progress: Double?
        /// Its first frame (0-based) and how many frames it lasts.
        package var startFrame: Int
        package var frameCount: Int
    }

    /// The speeds that can be asked for (a multiplier of the real pace).
    package static let speeds = 0.01...1000.0
    /// The pace it was drawn at.
    package static let defaultSpeed = 1.0
    /// The longest pause that can be asked for, in seconds.
    package static let maxPauses = 0.0...3600.0
    /// A pause's length at most, by default: 50 strokes play in about half a minute.
    package static let defaultMaxPause = 0.3
    /// The frame rates a replay may have.
    package static let frameRates = 1...60
    /// Film's rate, as the animatic's.
    package static let defaultFPS = 24
    /// The drawing as it was before the first event, held this long first.
    package static let openingSeconds = 0.5
    /// The finished drawing, held this long last.
    package static let closingSeconds = 1.5
    /// A stroke is drawn at this many points a second (a pen samples about 120 a second; twice its pace) …
    package static let drawingRate = 240.0
    /// … taking from this to that long (before `speed`).
    package static let drawingSeconds = 0.15...0.6

    /// Frames a second.
    package let fps: Int
    /// What the frames show, in order, end to end from frame 0.
    package let segments: [Segment]

    /// The replay's length in frames.
    package var frameCount: Int { segments.last.map { $0.startFrame + $0.frameCount } ?? 0 }
    /// Its length in seconds, on whole frames.
    package var seconds: Double { Double(frameCount) / Double(fps) }

    /// How long drawing a stroke of `points` points takes at speed 1.
    package static func drawingSeconds(points: Int) -> Double {
        min(drawingSeconds.upperBound, max(drawingSeconds.lowerBound, Double(points) / drawingRate))
    }

    /// Lays out the events that a render of `timeline`'s shot shows (`shownEvents`).
    /// Values out of `speeds`, `maxPauses` and `frameRates` are clamped into them. O(events + frames of drawing).
    package init(
        _ timeline: ReplayTimeline, speed: Double = defaultSpeed, maxPause: Double = defaultMaxPause,
        fps: Int = defaultFPS
    ) {
        self.init(events: timeline.shownEvents, speed: speed, maxPause: maxPause, fps: fps)
    }

    /// Lays out `events` (the timeline's `shownEvents`: `applied` counts them).
    init(events: [ReplayTimeline.Event], speed: Double, maxPause: Double, fps: Int) {
        let fps = min(max(fps, Self.frameRates.lowerBound), Self.frameRates.upperBound)
        let speed = speed.isFinite ? min(max(speed, Self.speeds.lowerBound), Self.speeds.upperBound) : Self.defaultSpeed
        let maxPause =
            maxPause.isFinite
            ? min(max(maxPause, Self.maxPauses.lowerBound), Self.maxPauses.upperBound) : Self.defaultMaxPause
        self.fps = fps
        func frame(_ seconds: Double) -> Int { Int((seconds * Double(fps)).rounded()) }

        // (first frame, what it shows); a later moment on the same frame replaces an earlier one.
        var moments: [(frame: Int, applied: Int, progress: Double?)] = [(0, 0, nil)]
        func show(at frame: Int, applied: Int, progress: Double?) {
            if moments[moments.count - 1].frame >= frame { moments.removeLast() }
            moments.append((max(frame, moments.last.map { $0.frame + 1 } ?? 0), applied, progress))
        }
        var clock = Self.openingSeconds
        for (index, event) in events.enumerated() {
            if index > 0, event.change != events[index - 1].change {
                let real = Double(max(0, event.time - events[index - 1].time)) / 1000
                clock += min(real / speed, maxPause)
            }
            guard event.kind == .drawn, let count = event.stroke?.points.count, count > 1 else {
                show(at: frame(clock), applied: index + 1, progress: nil)
                continue
            }
            // The stroke grows over its frames; its last frame shows it whole.
            let start = frame(clock)
            let frames = max(1, frame(clock + Self.drawingSeconds(points: count) / speed) - start)
            for step in 1...frames {
                let progress = Double(step) / Double(frames)
                show(
                    at: start + step - 1, applied: step == frames ? index + 1 : index,
                    progress: step == frames ? nil : progress)
            }
            clock = max(clock + Self.drawingSeconds(points: count) / speed, Double(start + frames) / Double(fps))
        }
        let end = max(frame(clock + Self.closingSeconds), moments[moments.count - 1].frame + 1)

        var segments: [Segment] = []
        for (index, moment) in moments.enumerated() {
            let next = index + 1 < moments.count ? moments[index + 1].frame : end
            if let last = segments.last, last.applied == moment.applied, last.progress == moment.progress {
                segments[segments.count - 1].frameCount += next - moment.frame
            } else {
                segments.append(
                    Segment(
                        applied: moment.applied, progress: moment.progress, startFrame: moment.frame,
                        frameCount: next - moment.frame))
            }
        }
        self.segments = segments
    }
}
