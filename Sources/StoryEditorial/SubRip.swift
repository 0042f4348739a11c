package import StoryCore

/// Subtitles as SubRip (`.srt`), the form ffmpeg muxes into an MP4 (and
/// turns into WebVTT for a WebM): one cue per shot that has text, timed by
/// the shot's frames on a `Timeline`. The text is data (`SubtitleText`): it
/// can add no cue of its own, and a shot with no length has no cue (a cue
/// must end after it starts).
package enum SubRip {
    /// The cues of `clips`, numbered from 1; `text` is what a shot shows (nil or empty: no cue).
    package static func document(_ clips: [Timeline.Clip], text: (ShotView) -> String?) -> String {
        var document = ""
        var number = 0
        for clip in clips where clip.length > 0 {
            guard let shown = text(clip.shot) else { continue }
            let lines = SubtitleText.lines(shown)
            guard !lines.isEmpty else { continue }
            number += 1
            document += "\(number)\n"
            document += "\(time(clip.start, webVTT: false)) --> \(time(clip.start + clip.length, webVTT: false))\n"
            document += lines.joined(separator: "\n") + "\n\n"
        }
        return document
    }

    /// `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT).
    package static func time(_ seconds: Double, webVTT: Bool) -> String {
        let milliseconds = Int((seconds * 1000).rounded())
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let (h, m, s, ms) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60, milliseconds / 1000 % 60, milliseconds % 1000)
        return "\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2))\(webVTT ? "." : ",")\(pad(ms, 3))"
    }
}
