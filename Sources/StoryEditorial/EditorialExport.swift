package import StoryCore

/// A timeline for an editor: a CMX3600 EDL or an FCPXML 1.9 document
/// (what Storyboarder and Storyboard Pro hand to Premiere, Avid and Final
/// Cut). Each shot is a still held for its frames, each shot's sound a clip
/// from its shot's start plus its offset, cut at the shot's end (as the
/// animatic plays it). The files name their media by the names
/// `stillName` and `soundName` give, in a directory the client fills.
/// Pure text; O(shots).
package enum EditorialExport {
    /// The file a shot's still is in (`2-3.png`).
    package static func stillName(of shot: ShotView) -> String { "\(shot.label).png" }

    /// The file a sound is in (`sound-3fa1c2d4e5f6.wav`).
    package static func soundName(of sound: MediaReference) -> String {
        "sound-\(sound.hash.description.prefix(12)).\(sound.type.fileExtension)"
    }

    /// A sound on the timeline, on whole frames: where it starts and how many frames it plays.
    package struct SoundClip: Hashable, Sendable {
        package var media: MediaReference
        package var shot: ShotView
        package var startFrame: Int
        package var frameCount: Int
    }

    /// Each shot's sound, as the timeline plays it (frames from its shot's
    /// start plus the sound's offset, to the shot's end at most).
    package static func sounds(in timeline: Timeline) -> [SoundClip] {
        timeline.clips.compactMap { clip in
            guard let sound = clip.shot.sound else { return nil }
            // A peer's document may hold any number: clamped before it becomes an Int.
            let offset = Int((clamped(sound.offset) * Double(timeline.fps)).rounded())
            let start = min(offset, clip.frameCount)
            var frames = clip.frameCount - start
            if sound.duration > 0 { frames = min(frames, Int((clamped(sound.duration) * Double(timeline.fps)).rounded(.up))) }
            guard frames > 0 else { return nil }
            return SoundClip(media: sound, shot: clip.shot, startFrame: clip.startFrame + start, frameCount: frames)
        }
    }

    /// The timeline as a CMX3600 EDL: a video event per shot (reel `AX`,
    /// the still named in a `FROM CLIP NAME` comment), then an audio event
    /// per sound; record timecodes from 01:00:00:00, non-drop frame.
    package static func edl(_ timeline: Timeline, title: String) -> String {
        var lines = ["TITLE: \(singleLine(title, limit: 70))", "FCM: NON-DROP FRAME", ""]
        var event = 0
        func add(track: String, sourceFrames: Int, recordStart: Int, clipName: String, comment: String?) {
            event += 1
            let number = String(repeating: "0", count: max(0, 3 - String(event).count)) + String(event)
            let reel = "AX" + String(repeating: " ", count: 6)
            let channel = track + String(repeating: " ", count: max(0, 5 - track.count))
            let timecodes = [
                timeline.timecode(frame: 0), timeline.timecode(frame: sourceFrames), timeline.timecode(frame: recordStart, hour: 1),
                timeline.timecode(frame: recordStart + sourceFrames, hour: 1),
            ]
            lines.append("\(number)  \(reel) \(channel) C        \(timecodes.joined(separator: " "))")
            lines.append("* FROM CLIP NAME: \(clipName)")
            if let comment { lines.append("* COMMENT: \(singleLine(comment, limit: 200))") }
            lines.append("")
        }
        for clip in timeline.clips where clip.frameCount > 0 {
            add(
                track: "V", sourceFrames: clip.frameCount, recordStart: clip.startFrame, clipName: stillName(of: clip.shot),
                comment: clip.shot.caption ?? clip.shot.dialogue)
        }
        for sound in sounds(in: timeline) {
            add(
                track: "A", sourceFrames: sound.frameCount, recordStart: sound.startFrame, clipName: soundName(of: sound.media),
                comment: "sound of shot \(sound.shot.label)")
        }
        return lines.joined(separator: "\n")
    }

    /// The timeline as an FCPXML 1.9 document: a format of `width`×`height`
    /// at the timeline's rate, an asset per still and sound (its file in
    /// `mediaDirectory`: an absolute path gives `file://` URLs, a relative one
    /// relative URLs), and a
    /// project whose spine holds a still per shot, with the shot's sound as a
    /// connected clip below it and its caption or dialogue as a note.
    package static func fcpxml(_ timeline: Timeline, title: String, width: Int, height: Int, mediaDirectory: String) -> String {
        let fps = timeline.fps
        let directory = mediaDirectory.hasSuffix("/") ? mediaDirectory : mediaDirectory + "/"
        let mediaURL = (directory.hasPrefix("/") ? "file://" : "") + percentEncoded(directory)
        func time(_ frames: Int) -> String { frames == 0 ? "0s" : "\(frames)/\(fps)s" }
        var resources = ["        <format id=\"r1\" frameDuration=\"1/\(fps)s\" width=\"\(width)\" height=\"\(height)\"/>"]
        var spine: [String] = []
        var assetIDs: [String: String] = [:]
        /// A still (no duration) or a sound (`duration`).
        func asset(named name: String, duration: String? = nil) -> String {
            if let id = assetIDs[name] { return id }
            let id = "r\(assetIDs.count + 2)"
            assetIDs[name] = id
            let kind =
                duration == nil ? "duration=\"0s\" hasVideo=\"1\" format=\"r1\"" : "duration=\"\(duration!)\" hasAudio=\"1\" audioSources=\"1\""
            resources.append("        <asset id=\"\(id)\" name=\"\(XMLText.escaped(name))\" start=\"0s\" \(kind)>")
            resources.append("            <media-rep kind=\"original-media\" src=\"\(XMLText.escaped(mediaURL + percentEncoded(name)))\"/>")
            resources.append("        </asset>")
            return id
        }
        let sounds = Dictionary(sounds(in: timeline).map { ($0.shot.id, $0) }, uniquingKeysWith: { first, _ in first })
        for clip in timeline.clips where clip.frameCount > 0 {
            let still = asset(named: stillName(of: clip.shot))
            spine.append(
                "                        <video ref=\"\(still)\" name=\"\(XMLText.escaped(clip.shot.label))\" offset=\"\(time(clip.startFrame))\" "
                    + "duration=\"\(time(clip.frameCount))\" start=\"0s\">")
            // The DTD's order within a clip: its note, then the clips connected to it.
            if let text = clip.shot.caption ?? clip.shot.dialogue, !text.isEmpty {
                spine.append("                            <note>\(XMLText.escaped(text))</note>")
            }
            if let sound = sounds[clip.shot.id] {
                let length = Int((clamped(sound.media.duration) * Double(fps)).rounded(.up))
                let id = asset(named: soundName(of: sound.media), duration: time(max(length, sound.frameCount)))
                spine.append(
                    "                            <asset-clip ref=\"\(id)\" lane=\"-1\" name=\"\(XMLText.escaped(soundName(of: sound.media)))\" "
                        + "offset=\"\(time(sound.startFrame - clip.startFrame))\" duration=\"\(time(sound.frameCount))\" start=\"0s\"/>")
            }
            spine.append("                        </video>")
        }
        let name = XMLText.escaped(singleLine(title, limit: 200))
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE fcpxml>
            <fcpxml version="1.9">
                <resources>
            \(resources.joined(separator: "\n"))
                </resources>
                <library>
                    <event name="\(name)">
                        <project name="\(name)">
                            <sequence format="r1" duration="\(time(timeline.frameCount))" tcStart="0s" tcFormat="NDF" audioLayout="stereo" audioRate="48k">
                                <spine>
            \(spine.joined(separator: "\n"))
                                </spine>
                            </sequence>
                        </project>
                    </event>
                </library>
            </fcpxml>

            """
    }

    /// Seconds within 0 to a day (NaN: 0).
    package static func clamped(_ seconds: Double) -> Double {
        seconds.isFinite ? min(max(0, seconds), Timeline.maximumSeconds) : 0
    }

    /// A file name as a URL path segment.
    static func percentEncoded(_ name: String) -> String {
        var result = ""
        for byte in name.utf8 {
            let isPlain =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/")
            if isPlain {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF")
                result += "%\(hex[Int(byte >> 4)])\(hex[Int(byte & 15)])"
            }
        }
        return result
    }

    /// One line of at most `limit` characters (EDL lines are read line by line).
    static func singleLine(_ text: String, limit: Int) -> String {
        let flat = text.split(whereSeparator: { $0.isNewline || $0 == "\t" }).joined(separator: " ")
        return String(flat.unicodeScalars.filter { $0.value >= 0x20 }.map(Character.init).prefix(limit))
    }
}

/// Text inside XML (FCP XML, SVG).
package enum XMLText {
    /// Text for an XML attribute or element: markup characters as
    /// entities, newlines and tabs as character references, the control
    /// characters XML 1.0 forbids left out.
    package static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\n": result += "&#10;"
            case "\t": result += "&#9;"
            // Control characters are not allowed in XML 1.0 at all.
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
