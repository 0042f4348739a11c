import ArgumentParser
import Foundation
import StoryAPI

/// `undo` and `redo`: take back (or reapply) the last edit of a session, and
/// say which edit that was.
struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Undo your last edit of a project, and say what it was.",
        discussion: """
            Undo takes back only your own edits (of this undo session), never another person's. Parts of the \
            edit that someone changed since are left as they made them. If someone changed all of your last \
            edit, nothing is done and undo says who; --older then passes over it to the edit before. The \
            undo history is kept across daemon restarts.

            Examples:
              storyteller undo "Night Train"
              storyteller undo --older
            """)
    @Argument(help: Help.project) var project: String?
    @Flag(help: "If your last edit was overruled by someone else's, undo the newest edit of yours that was not.") var older = false
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        try undoOrRedo(.undo, project: project, older: older, editOptions: editOptions, options: options)
    }
}

struct Redo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Redo the edit you last undid, and say what it was.",
        discussion: """
            The same rules as undo: parts that someone changed since are left alone; --older passes over an \
            undo that was overruled.

            Example:
              storyteller redo "Night Train"
            """)
    @Argument(help: Help.project) var project: String?
    @Flag(help: "If your last undo was overruled by someone else's edit, redo the one before it.") var older = false
    @OptionGroup var editOptions: EditOptions
    @OptionGroup var options: ClientOptions

    func run() throws {
        try undoOrRedo(.redo, project: project, older: older, editOptions: editOptions, options: options)
    }
}

private enum Direction: String {
    case undo, redo

    var done: String { self == .undo ? "undid" : "redid" }
}

private func undoOrRedo(_ direction: Direction, project: String?, older: Bool, editOptions: EditOptions, options: ClientOptions) throws {
    let names = Names(options)
    let id = try names.project(project)
    let request = API.UndoRequest(session: editOptions.session, older: older ? true : nil)
    let result = try options.call(API.UndoResult.self, "POST", "/v1/projects/\(segment(id))/\(direction.rawValue)", body: request)
    guard !options.json else { return }
    for passed in result.passedOver {
        print("passed over: \(passed) (overruled)")
    }
    let me = try? names.quietIdentity()
    let who = result.overruledBy.map { names.who($0, local: false, me: me) }
    let people = who.isEmpty ? "someone else" : who.joined(separator: " and ")
    if result.overruled {
        print(
            "nothing \(direction == .undo ? "undone" : "redone"): your last \(direction == .undo ? "edit" : "undo") (\(result.summary ?? "an edit")) was overruled by \(people), who changed it since"
        )
        print("  `storyteller \(direction.rawValue) --older` \(direction.rawValue)s the one before it")
        return
    }
    guard result.undone == true || result.redone == true else {
        print("nothing to \(direction.rawValue)" + (editOptions.session.map { " in session \($0)" } ?? ""))
        return
    }
    print("\(direction.done): \(result.summary ?? "an edit")")
    if result.partsLeftAlone > 0 {
        print(
            "  \(result.partsLeftAlone) part\(result.partsLeftAlone == 1 ? " was" : "s were") left as \(people) changed \(result.partsLeftAlone == 1 ? "it" : "them") since"
        )
    }
}
