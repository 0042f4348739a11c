import ArgumentParser

extension Export {
    /// `storyteller export edl`: a CMX3600 EDL of a scene, with its stills and sounds beside it.
    struct EDL: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edl",
            abstract: "Write a CMX3600 EDL of a scene for an editor, with its stills and sounds in a folder beside it.",
            discussion: """
                Each shot is a clip (reel AX, its still named in a FROM CLIP NAME comment) held for its frames; each \
                shot's sound is an audio event from its shot's start plus its offset, cut at the shot's end. Record \
                timecodes start at 01:00:00:00, non-drop frame, at --fps. The stills (PNG) and sounds are written to \
                NAME_media/ beside the EDL.

                Examples:
                  storyteller export edl "Night Train" --scene 1 --out scene1.edl --fps 24
                  storyteller export edl "Night Train" --scene 1 --tag vfx --out vfx.edl
                """)
        @OptionGroup var arguments: TimelineArguments

        mutating func validate() throws { try arguments.validate() }
        func run() throws { try arguments.run(kind: "edl") }
    }
}
