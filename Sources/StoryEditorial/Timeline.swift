package import StoryCore

/// Shots laid end to end at a frame rate, as an animatic or an editor's
/// timeline plays them: each held for its `duration` (2 s when unset),
/// with every cut on a whole frame.
///
/// Cuts come from the cumulative start times, each rounded to the nearest
/// frame once, never from rounding every shot's length on its own: rounding
/// 1.01 s forty times at 24 fps would add almost a second, and the picture
/// would drift against sound placed at its real times. So a shot's frame
/// count may differ by one from its own duration × fps, and the whole is
/// always round(sum of durations × fps) frames. A shot shorter than half a
/// frame gets no frames (it is in the timeline with a length of 0).
package struct Timeline: Hashable, Sendable {
    /// One shot on the timeline.
    package struct Clip: Hashable, Sendable {
        /// The shot it shows.
        package var shot: ShotView
        /// Its first frame (0-based) and how many frames it lasts.
        package var startFrame: Int
        package var frameCount: Int
        /// Where it starts and how long it lasts in seconds, on whole frames.
        package var start: Double
        package var length: Double
    }

    /// The length of a shot whose duration is not set.
    package static let defaultShotDuration = 2.0
    /// The frame rates a timeline may have (whole frames a second).
    package static let frameRates = 1...120
    /// The longest timeline, in seconds (a day; durations are at most that each).
    package static let maximumSeconds = 86_400.0

    /// Frames a second.
    package let fps: Int
    /// The shots in order.
    package let clips: [Clip]

    /// The timeline of `shots` at `fps` (`frameRates`; clamped into it).
    /// O(shots).
    package init(shots: [ShotView], fps: Int) {
        let fps = min(max(fps, Self.frameRates.lowerBound), Self.frameRates.upperBound)
        self.fps = fps
        var clips: [Clip] = []
        clips.reserveCapacity(shots.count)
        var elapsed = 0.0
        var startFrame = 0
        for shot in shots {
            elapsed = min(Self.maximumSeconds, elapsed + Self.duration(of: shot))
            let endFrame = Int((elapsed * Double(fps)).rounded())
            clips.append(
                Clip(
                    shot: shot, startFrame: startFrame, frameCount: endFrame - startFrame, start: Double(startFrame) / Double(fps),
                    length: Double(endFrame - startFrame) / Double(fps)))
            startFrame = endFrame
        }
        self.clips = clips
    }

    /// A shot's duration in seconds: its own when it is a finite number from
    /// 0 to a day, else `defaultShotDuration`.
    package static func duration(of shot: ShotView) -> Double {
        guard let duration = shot.duration, duration.isFinite, duration >= 0, duration <= maximumSeconds else {
            return defaultShotDuration
        }
        return duration
    }

    /// All frames.
    package var frameCount: Int { clips.last.map { $0.startFrame + $0.frameCount } ?? 0 }

    /// The length in seconds (whole frames).
    package var seconds: Double { Double(frameCount) / Double(fps) }

    /// A frame number as a non-drop-frame SMPTE timecode `HH:MM:SS:FF` at
    /// this rate, starting from `hour` (editors' timelines start at 01:00:00:00).
    package func timecode(frame: Int, hour: Int = 0) -> String {
        let total = max(0, frame) + hour * 3600 * fps
        let frames = total % fps
        let seconds = total / fps
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(two(seconds / 3600 % 100)):\(two(seconds / 60 % 60)):\(two(seconds % 60)):\(two(frames))"
    }
}
