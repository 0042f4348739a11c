import ArgumentParser

extension Export {
    /// `storyteller export fcpxml`: an FCPXML 1.9 timeline of a scene, with its stills and sounds beside it.
    struct FCPXML: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fcpxml",
            abstract: "Write an FCPXML 1.9 timeline of a scene for Final Cut Pro, with its stills and sounds beside it.",
            discussion: """
                A project whose spine holds each shot's still for its frames, the shot's sound as a connected clip \
                below it, and its caption (else dialogue) as a note. The stills (PNG) and sounds are written to \
                NAME_media/ beside the file, which names them by absolute file URLs.

                Example:
                  storyteller export fcpxml "Night Train" --scene 1 --out scene1.fcpxml
                """)
        @OptionGroup var arguments: TimelineArguments

        mutating func validate() throws { try arguments.validate() }
        func run() throws { try arguments.run(kind: "fcpxml") }
    }
}
