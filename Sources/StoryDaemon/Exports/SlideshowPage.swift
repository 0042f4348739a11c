import Foundation
import StoryAPI
import StoryCore
import StoryEditorial
import StoryIdentity

/// The slideshow of a project as one HTML page: each shot's panel at its
/// duration with its caption, dialogue and sound, keyboard and timeline
/// controls, and nothing fetched from anywhere but the page's own origin (or
/// nothing at all: `.inline`). Pure: the caller says where each panel and
/// sound is (a `data:` URI, a file beside the page, a URL of the preview
/// listener) and streams the pieces.
///
/// All user text is HTML-escaped into the markup and the script never reads
/// it as HTML; the Content-Security-Policy admits only this page's own script
/// and style (by their SHA-256), so even an escaping mistake could not run code.
struct SlideshowPage: Sendable {
    /// One shot of the slideshow.
    struct Slide: Sendable, Hashable {
        var shot: OpID
        /// The scene's number (the timeline marks where a scene starts).
        var scene: Int
        var label: String
        /// Seconds (the shot's duration, or `API.Slideshow.defaultDuration`).
        var duration: Double
        var caption: String?
        var dialogue: String?
        /// The shot's sound, when this machine holds it whole.
        var sound: MediaReference?
        /// The shot has a sound that is not here (yet).
        var isSoundMissing = false
        /// The shot's width / height.
        var aspectRatio: Double
    }

    /// Where the page's panels and sounds come from; decides the CSP.
    enum Media: Sendable {
        /// `data:` URIs in the page (a single self-contained file).
        case inline
        /// Files beside the page (a directory export).
        case files
        /// The preview listener, with server-sent events for changes.
        case live
    }

    let title: String
    let slides: [Slide]
    let media: Media

    /// The slides of a project's visible shots in board order.
    /// - Parameter holds: whether this machine holds a blob whole.
    static func slides(of view: ProjectView, holds: (BlobHash) -> Bool) -> [Slide] {
        view.shots.map { shot in
            let duration = shot.duration.flatMap { $0.isFinite && $0 > 0 ? min($0, 3_600) : nil } ?? API.Slideshow.defaultDuration
            let sound = shot.sound.flatMap { holds($0.hash) ? $0 : nil }
            return Slide(
                shot: shot.id, scene: shot.sceneNumber, label: shot.label, duration: duration, caption: nonEmpty(shot.caption),
                dialogue: nonEmpty(shot.dialogue),
                sound: sound, isSoundMissing: shot.sound != nil && sound == nil, aspectRatio: shot.aspectRatio)
        }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return text
    }

    /// Seconds of the whole slideshow.
    var totalDuration: Double { slides.reduce(0) { $0 + $1.duration } }

    // MARK: - Markup

    /// Everything before the first slide.
    func head() -> String {
        let count = slides.count
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(Self.escaped(contentSecurityPolicy))">
            <meta name="referrer" content="no-referrer">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="Storyteller \(API.version)">
            <title>\(Self.escaped(title)) · storyboard</title>
            <style>\(Self.style)</style>
            </head>
            <body data-live="\(media == .live)">
            <header><h1>\(Self.escaped(title))</h1><p id="status" aria-live="polite"></p><p id="counter">\(count == 0 ? 0 : 1) / \(count)</p></header>
            <main id="stage">

            """ + (slides.isEmpty ? "<p class=\"empty\">This project has no shots yet.</p>\n" : "")
    }

    /// A slide's markup around its sound's URL: `before + soundURL + after`
    /// (a shot without a sound here: `after` is empty and no URL goes between).
    func slide(_ index: Int, panel: String) -> (before: String, after: String) {
        let slide = slides[index]
        let label = "Shot \(slide.label)"
        var before = """
            <figure class="slide\(index == 0 ? " current" : "")" id="shot-\(index + 1)" data-shot="\(Self.escaped(slide.shot.description))" \
            data-duration="\(Self.number(slide.duration))" data-sound-offset="\(Self.number(slide.sound?.offset ?? 0))"\
            \(index == 0 ? " aria-current=\"true\"" : "")>
            <div class="frame"><img class="panel" src="\(Self.escaped(panel))" data-src="\(Self.escaped(panel))" alt="\(Self.escaped(label))" \
            width="\(Self.panelSize(slide.aspectRatio).width)" height="\(Self.panelSize(slide.aspectRatio).height)"></div>
            <figcaption><span class="label">\(Self.escaped(slide.label))</span><span class="duration">\(Self.seconds(slide.duration))</span>
            """
        if let caption = slide.caption { before += "<p class=\"caption\">\(Self.escaped(caption))</p>" }
        if let dialogue = slide.dialogue { before += "<p class=\"dialogue\">\(Self.escaped(dialogue))</p>" }
        if slide.isSoundMissing { before += "<p class=\"note\">(its sound is not on this machine yet)</p>" }
        before += "</figcaption>\n"
        guard slide.sound != nil else { return (before + "</figure>\n", "") }
        return (before + "<audio preload=\"auto\" src=\"", "\"></audio>\n</figure>\n")
    }

    /// Everything after the last slide: the controls and the script.
    func tail() -> String {
        var segments = ""
        var start = 0.0
        for (index, slide) in slides.enumerated() {
            // A new scene starts with a wider gap in the timeline.
            let isSceneStart = index > 0 && slides[index - 1].scene != slide.scene
            segments += """
                <button class="segment\(index == 0 ? " current" : "")\(isSceneStart ? " scene-start" : "")" type="button" data-index="\(index)" data-duration="\(Self.number(slide.duration))" \
                title="\(Self.escaped(slide.label)) at \(Self.clock(start))"><span>\(Self.escaped(slide.label))</span></button>
                """
            start += slide.duration
        }
        let disabled = slides.isEmpty ? " disabled" : ""
        return """
            </main>
            <footer>
            <div id="controls">
            <button id="previous" type="button"\(disabled) title="Previous shot (←)" aria-label="Previous shot">\(Self.icon("M3 2h2v12H3zM14 2v12L6 8z"))</button>
            <button id="play" type="button"\(disabled) title="Play or pause (space)" aria-label="Play" aria-pressed="false">\
            \(Self.icon("M4 2v12l10-6z", class: "icon-play"))\(Self.icon("M3 2h4v12H3zM9 2h4v12H9z", class: "icon-pause"))</button>
            <button id="next" type="button"\(disabled) title="Next shot (→)" aria-label="Next shot">\(Self.icon("M11 2h2v12h-2zM2 2v12l8-6z"))</button>
            <span id="clock">0:00 / \(Self.clock(totalDuration))</span>
            <span id="keys">← → shots · space play/pause · Home/End</span>
            </div>
            <div id="timeline" role="group" aria-label="Timeline">\(segments)\(slides.isEmpty ? "" : "<div id=\"playhead\"></div>")</div>
            </footer>
            <script>\(Self.script)</script>
            </body>
            </html>

            """
    }

    /// The Content-Security-Policy: nothing by default; this page's one
    /// script and style by hash; pictures and sounds only from where `media` says.
    var contentSecurityPolicy: String {
        let sources: String
        let connect: String
        switch media {
        case .inline: (sources, connect) = ("data:", "'none'")
        case .files: (sources, connect) = ("'self'", "'none'")
        case .live: (sources, connect) = ("'self'", "'self'")
        }
        return "default-src 'none'; script-src '\(Self.scriptHash)'; style-src '\(Self.styleHash)'; img-src \(sources); "
            + "media-src \(sources); connect-src \(connect); base-uri 'none'; form-action 'none'"
    }

    // MARK: - Helpers

    /// `text` safe in HTML text and in a quoted attribute value.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            // Control characters other than tab and newline have no business in a page.
            case _ where character.value < 0x20 && character != "\n" && character != "\t": result += " "
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// Seconds as JavaScript reads them (`2`, `1.5`).
    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.3f", value)
    }

    /// A duration as people read it on a board: `2 s`, `1.5 s`.
    static func seconds(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return (tenths == tenths.rounded() ? String(Int(tenths)) : String(format: "%.1f", tenths)) + " s"
    }

    /// `m:ss`.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        return "\(whole / 60):\(String(format: "%02d", whole % 60))"
    }

    /// The panel's size at `API.Slideshow.defaultWidth` (the `<img>`'s own
    /// ratio before it loads, so the layout does not jump).
    static func panelSize(_ aspectRatio: Double) -> (width: Int, height: Int) {
        let ratio = aspectRatio.isFinite && aspectRatio > 0 ? aspectRatio : ProjectView.defaultAspectRatio
        return (1_280, max(1, Int((1_280 / ratio).rounded())))
    }

    /// A 16 × 16 icon drawn in the text colour (inline SVG: no font has to have the glyph).
    private static func icon(_ path: String, class name: String = "icon") -> String {
        #"<svg class="\#(name)" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="\#(path)"/></svg>"#
    }

    /// `sha256-…` of a text, for the CSP.
    private static func hash(_ text: String) -> String {
        let digest = OpenSSLCrypto.shared.sha256(nil, Array(text.utf8)[...])
        var bytes: [UInt8] = []
        let hex = Array(digest.description.utf8)
        var index = 0
        while index + 1 < hex.count {
            bytes.append(UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
            index += 2
        }
        return "sha256-" + Data(bytes).base64EncodedString()
    }

    static let scriptHash = hash(script)
    static let styleHash = hash(style)
}
