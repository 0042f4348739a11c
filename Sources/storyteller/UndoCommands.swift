import ArgumentParser
import Foundation
import StoryAPI

/// `undo` and `redo`: take back (or reapply) the last edit of a session.
struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Undo the last edit of a session in a project.",
        discussion: "Example:\n  storyteller undo \"Night Train\"")
    @Argument(help: Help.project) var project: String?
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let result = try undoOrRedo("undo", project: project, editOptions: editOptions, options: options)
        if !options.json { print(result.undone == true ? "undone" : "nothing to undo") }
    }
}

struct Redo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Redo the last undone edit of a session.", discussion: "Example:\n  storyteller redo \"Night Train\"")
    @Argument(help: Help.project) var project: String?
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        let result = try undoOrRedo("redo", project: project, editOptions: editOptions, options: options)
        if !options.json { print(result.redone == true ? "redone" : "nothing to redo") }
    }
}

private func undoOrRedo(_ action: String, project: String?, editOptions: EditOptions, options: ClientOptions) throws -> API.UndoResult {
    let project = try Names(options).project(project)
    let body = try API.encoder.encode(API.UndoRequest(session: editOptions.session))
    let response = try options.raw("POST", "/v1/projects/\(segment(project))/\(action)", body: body)
    if options.json { print(String(decoding: response.body, as: UTF8.self)) }
    return (try? API.decoder.decode(API.UndoResult.self, from: response.body)) ?? API.UndoResult(undone: false)
}
