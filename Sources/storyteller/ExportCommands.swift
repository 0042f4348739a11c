import ArgumentParser

/// `storyteller export …`: boards that leave the system. Each kind of
/// output is a subcommand in a file of its own (`Export<Kind>Command.swift`).
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a project out: print sheets, pictures, an animatic, a package for a client.",
        subcommands: [
            PDF.self,
            Images.self,
            Animatic.self,
            EDL.self,
            FCPXML.self,
            HTML.self,
            ExportPackage.self,
        ])
}
