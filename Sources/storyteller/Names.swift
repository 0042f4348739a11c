import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// What a person typed, turned into the ids the API takes: `API.resolve`
/// over the daemon's own lists, each fetched once per command. A whole id
/// is taken as it is, without asking the daemon.
final class Names {
    private let options: ClientOptions
    private var peerList: [API.Peer]?
    private var pendingList: [API.Peer]?
    private var projectList: [API.ProjectSummary]?
    private var library: API.Library?
    private var projects: [String: API.Project] = [:]
    private var projectsWithPoints: [String: API.Project] = [:]

    init(_ options: ClientOptions) { self.options = options }

    // MARK: Peers

    /// A configured peer (or a pending one, for `accept`): id, id prefix or name.
    func peer(_ text: String, pending: Bool = false) throws -> String {
        if PeerID(text) != nil { return text }
        let peers = pending ? try pendingPeers() : try configuredPeers()
        return try named {
            try API.resolve(
                text, among: API.peerCandidates(peers), kind: pending ? "pending peer" : "peer",
                hint: pending ? "`storyteller peers pending`" : "`storyteller peers`")
        }.id
    }

    func configuredPeers() throws -> [API.Peer] {
        if let peerList { return peerList }
        let peers = try quietly { try $0.call([API.Peer].self, "GET", "/v1/peers") }
        peerList = peers
        return peers
    }

    private func pendingPeers() throws -> [API.Peer] {
        if let pendingList { return pendingList }
        let peers = try quietly { try $0.call([API.Peer].self, "GET", "/v1/peers/pending") }
        pendingList = peers
        return peers
    }

    /// How to call an author: "you", the peer's name, or its short id.
    func who(_ peerID: String?, local: Bool, me: String?) -> String {
        guard let peerID else { return local ? "you" : "someone" }
        if local || peerID == me { return "you" }
        if let peer = (try? configuredPeers())?.first(where: { $0.id == peerID }) {
            return PrintableText.escaped(peer.name ?? peer.announcedName ?? String(peerID.prefix(7)))
        }
        return String(peerID.prefix(7))
    }

    /// This daemon's own peer id (to call its changes "you").
    func quietIdentity() throws -> String {
        try quietly { try $0.call(API.Identity.self, "GET", "/v1/identity") }.peerID
    }

    // MARK: Projects

    /// A project's name for sentences, looked up (again, if new) by id.
    func projectName(_ id: String) -> String {
        if let name = projectList?.first(where: { $0.id == id })?.name { return PrintableText.escaped(name) }
        projectList = nil
        if let name = (try? projectSummaries())?.first(where: { $0.id == id })?.name { return PrintableText.escaped(name) }
        // Not a project: the library, or a shared folder (its name, or where it is).
        if let library = try? libraryTree() {
            if library.id == id { return "the library" }
            if let shared = library.shared.first(where: { $0.id == id }) { return "folder " + PrintableText.escaped(shared.name ?? "?") }
            if let entry = library.nodes.first(where: { $0.folder == id }) { return "folder " + PrintableText.escaped(entry.name ?? "?") }
        }
        return String(id.prefix(7))
    }

    /// The newest changes of a project.
    func history(of project: String, limit: Int) throws -> API.History {
        try quietly { try $0.call(API.History.self, "GET", "/v1/projects/\(segment(project))/history?limit=\(limit)") }
    }

    /// A project: given, else `STORYTELLER_PROJECT`, else the one `storyteller use` chose.
    /// Id, id prefix, name or library path (`Films/Night Train`).
    /// `otherwise`: what to say when a current project is chosen and `text`
    /// names none, since the word was likely meant for something else
    /// (`scenes add Platform`: a title).
    func project(_ text: String?, deleted: Bool = false, otherwise: String? = nil) throws -> String {
        let source: String
        let given: String
        if let text {
            (given, source) = (text, "")
        } else if let current = CurrentProject.chosen(for: options.client.path) {
            (given, source) = current
        } else {
            printError("which project? Name one, or choose one for every command with `storyteller use PROJECT`")
            throw ExitCode(64)
        }
        do {
            return try resolveProject(given, deleted: deleted)
        } catch let error as API.NameError {
            if !source.isEmpty { printError("the current project (\(source)) is not on this daemon") }
            let exit = failure(error)
            // `storyteller layers add 1-1 ink` after `use`: the words after the project are
            // read as project, shot, …, so a shot label lands where the project goes.
            if source.isEmpty, let current = CurrentProject.chosen(for: options.client.path), given.wholeMatch(of: /[0-9]+(-[0-9]+|[A-Za-z])/) != nil
            {
                printError(
                    "'\(given)' looks like a shot label, not a project: with a current project (\(current.1)), leave the "
                        + "project out and give only the words that follow it, with options for the rest (the command's --help shows them)")
            } else if source.isEmpty, CurrentProject.chosen(for: options.client.path) != nil, let otherwise {
                printError(otherwise)
            }
            throw exit
        }
    }

    /// Whether the project was left out and `word`, in its place, is the
    /// word after it: a current project is chosen (`storyteller use`) and
    /// `word` names no project (id, id prefix, name or library path). Says
    /// nothing when it names none.
    func projectLeftOut(before word: String) throws -> Bool {
        guard CurrentProject.chosen(for: options.client.path) != nil else { return false }
        do {
            _ = try resolveProject(word, deleted: false)
            return false
        } catch is API.NameError {
            return true
        }
    }

    /// The id of the project `text` names; `API.NameError` when it names none
    /// or several (a daemon that cannot be asked throws its own error).
    private func resolveProject(_ text: String, deleted: Bool) throws -> String {
        if DocumentID(text) != nil { return text }
        let candidates = API.projectCandidates(try projectSummaries(deleted: deleted), library: try libraryTree())
        return try API.resolve(text, among: candidates, kind: "project", hint: "`storyteller projects list`").id
    }

    func projectSummaries(deleted: Bool = false) throws -> [API.ProjectSummary] {
        if let projectList, !deleted { return projectList }
        let list = try quietly { try $0.call([API.ProjectSummary].self, "GET", "/v1/projects" + (deleted ? "?deleted=true" : "")) }
        if !deleted { projectList = list }
        return list
    }

    /// What `share` and `unshare` name: `library`, a project, or a folder
    /// (by path, or id), as the words select exactly one.
    enum ShareTarget {
        case library
        case project(String)
        case folder(String)

        /// The route of its shares.
        var sharesPath: String {
            switch self {
            case .library: "/v1/library/shares"
            case .project(let id): "/v1/projects/\(segment(id))/shares"
            case .folder(let node): "/v1/library/nodes/\(segment(node))/shares"
            }
        }
    }

    func shareTarget(_ text: String) throws -> ShareTarget {
        if text == "library" { return .library }
        if DocumentID(text) != nil { return .project(text) }
        let tree = try libraryTree()
        let projects = API.projectCandidates(try projectSummaries(), library: tree)
        let folders = API.folderCandidates(tree)
        let project = try? API.resolve(text, among: projects, kind: "project")
        let folder = try? API.resolve(text, among: folders, kind: "folder")
        switch (project, folder) {
        case (let project?, nil): return .project(project.id)
        case (nil, let folder?): return .folder(folder.id)
        case (let project?, let folder?):
            printError("'\(text)' is both \(project.display) and \(folder.display); give the project's id or the folder's path")
            throw ExitCode(64)
        case (nil, nil):
            // Neither list selects one: say why (none, or several) over both.
            let found = try named { try API.resolve(text, among: projects + folders, kind: "project or folder", hint: "`storyteller tree`") }
            return projects.contains { $0.id == found.id } ? .project(found.id) : .folder(found.id)
        }
    }

    func libraryTree() throws -> API.Library {
        if let library { return library }
        let tree = try quietly { try $0.call(API.Library.self, "GET", "/v1/library") }
        library = tree
        return tree
    }

    /// Looks names inside `project` up in `structure` from now on (the
    /// project at a past version, for `--at`).
    func remember(_ structure: API.Project, of project: String) { projects[project] = structure }

    /// "at version 8a87e4be" when `project`'s names are looked up at a past
    /// version (`remember`), for what a failed lookup says.
    private func scope(of project: String) -> String? { projects[project]?.version.map { "at version \($0)" } }

    /// A project's structure (strokes without their points, unless asked).
    func structure(of project: String, withPoints: Bool = false) throws -> API.Project {
        if let known = withPoints ? projectsWithPoints[project] : projects[project] { return known }
        let query = withPoints ? "" : "?points=false"
        let answer = try quietly { try $0.call(API.Project.self, "GET", "/v1/projects/\(segment(project))\(query)") }
        if withPoints { projectsWithPoints[project] = answer } else { projects[project] = answer }
        return answer
    }

    /// An object of the project in words, looked up afresh: "shot 1-3",
    /// "layer ink in shot 1-2", "stroke 4 of layer ink in shot 1-2".
    func describe(_ id: String, in project: String) -> String {
        projects[project] = nil
        guard let structure = try? structure(of: project) else { return id }
        for scene in structure.scenes {
            if scene.id == id { return "scene \(scene.number)" + (scene.title.map { " \($0)" } ?? "") }
            for shot in scene.shots {
                if shot.id == id { return "shot \(shot.label)" }
                for layer in shot.layers {
                    let layerName = "layer \(layer.name ?? "(no name)") in shot \(shot.label)"
                    if layer.id == id { return layerName }
                    if let index = layer.strokes.firstIndex(where: { $0.id == id }) { return "stroke \(index + 1) of \(layerName)" }
                }
            }
        }
        return id
    }

    // MARK: Inside a project

    func scene(_ text: String, in project: String) throws -> API.ObjectReference {
        try reference(text, scope: scope(of: project)) {
            try API.resolve(
                text, among: API.sceneCandidates(structure(of: project)), kind: "scene",
                hint: "`storyteller scenes list`")
        }
    }

    /// The project's scene when it has only one (`shots add` without a
    /// SCENE); with none or several, says so and exits 64.
    func onlyScene(in project: String) throws -> API.ObjectReference {
        try only(
            structure(of: project).scenes, word: "SCENE", plural: "scenes", id: \.id,
            none: "the project has no scene yet (add one: storyteller scenes add --title TITLE)"
        ) { "\($0.number)" + ($0.title.map { " \($0)" } ?? "") }
    }

    /// The project's shot when it has only one (`layers add` without a
    /// SHOT); with none or several, says so and exits 64.
    func onlyShot(in project: String) throws -> API.ObjectReference {
        try only(
            structure(of: project).scenes.flatMap(\.shots), word: "SHOT", plural: "shots", id: \.id,
            none: "the project has no shot yet (add one: storyteller shots add)", listed: \.label)
    }

    /// The one item of `items`; with none, says `none`; with several, lists
    /// up to five of them (`listed`); then exits 64.
    private func only<Item>(
        _ items: [Item], word: String, plural: String, id: (Item) -> String, none: String, listed: (Item) -> String
    ) throws -> API.ObjectReference {
        guard items.count == 1, let only = API.ObjectReference(id(items[0])) else {
            if items.isEmpty {
                printError("give the \(word): \(none)")
            } else {
                let names = items.prefix(5).map(listed).joined(separator: ", ")
                printError("give the \(word): the project has \(items.count) \(plural) (\(names)\(items.count > 5 ? ", …" : ""))")
            }
            throw ExitCode(64)
        }
        return only
    }

    func shot(_ text: String, in project: String) throws -> API.ObjectReference {
        try reference(text, scope: scope(of: project)) {
            try API.resolve(
                text, among: API.shotCandidates(structure(of: project)), kind: "shot",
                hint: "`storyteller shots list`")
        }
    }

    /// A layer: its name (in `shot` when given; else in the whole project),
    /// `SHOT/NAME`, or id prefix.
    func layer(_ text: String, in project: String, shot: String? = nil) throws -> API.ObjectReference {
        try reference(text, scope: scope(of: project)) {
            try API.resolve(
                text, among: API.layerCandidates(structure(of: project), shot: shot), kind: "layer",
                hint: "`storyteller layers list SHOT`")
        }
    }

    /// A stroke of a layer: its number in the layer (as `strokes list` shows), or id prefix.
    func stroke(_ text: String, layer: API.ObjectReference, in project: String) throws -> API.ObjectReference {
        try reference(text, scope: scope(of: project)) {
            let structure = try structure(of: project)
            guard case .id(let layerID) = layer,
                let found = structure.scenes.lazy.flatMap({ $0.shots }).flatMap({ $0.layers }).first(where: { $0.id == layerID.description })
            else { return API.Candidate(id: text, names: [], display: text) }
            return try API.resolve(text, among: API.strokeCandidates(found), kind: "stroke", hint: "`storyteller strokes list LAYER`")
        }
    }

    /// A shot of the project as the API lists it.
    func shotDetail(_ reference: API.ObjectReference, in project: String) throws -> API.Shot? {
        guard case .id(let id) = reference else { return nil }
        return try structure(of: project).scenes.lazy.flatMap(\.shots).first { $0.id == id.description }
    }

    // MARK: Plumbing

    /// A whole id or `$N` as given; anything else looked up.
    private func reference(_ text: String, scope: String? = nil, _ lookup: () throws -> API.Candidate) throws -> API.ObjectReference {
        if let whole = API.ObjectReference(text) { return whole }
        let found = try named(scope: scope, lookup)
        guard let reference = API.ObjectReference(found.id) else {
            printError("'\(text)' is not an id (like 12@3f2a9c1e…) nor a name here")
            throw ExitCode(64)
        }
        return reference
    }

    /// The candidate, or the name error said in words. Both an ambiguity and
    /// a name that matches nothing are usage errors (64), like a malformed
    /// id; a whole id the daemon does not have is its "no" (1).
    private func named(scope: String? = nil, _ lookup: () throws -> API.Candidate) throws -> API.Candidate {
        do {
            return try lookup()
        } catch var error as API.NameError {
            error.scope = scope
            throw failure(error)
        }
    }

    private func failure(_ error: API.NameError) -> ExitCode {
        printError(error.description)
        return ExitCode(64)
    }

    /// Asks the daemon without printing the answer (lookups are not the command's output under `--json`).
    private func quietly<Answer>(_ call: (ClientOptions) throws -> Answer) throws -> Answer {
        var silent = options
        silent.json = false
        return try call(silent)
    }
}

/// The project commands use when none is named: `STORYTELLER_PROJECT`, else
/// the one `storyteller use` wrote to `$XDG_CONFIG_HOME/storyteller/project`.
enum CurrentProject {
    /// The choices, one line per daemon: its control socket, a tab, the project id.
    static var file: URL { directory.appendingPathComponent("current-projects") }
    /// The single choice kept before choices were per daemon (read, never written).
    static var legacyFile: URL { directory.appendingPathComponent("project") }

    static var directory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return URL(fileURLWithPath: base).appendingPathComponent("storyteller")
    }

    private static func choices() -> [(socket: String, project: String)] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }
    }

    /// The project chosen for the daemon behind `socket`, and where the
    /// choice comes from: `STORYTELLER_PROJECT`, else `storyteller use` with
    /// that daemon (another daemon, say a test one, has its own choice).
    static func chosen(for socket: String) -> (String, String)? {
        if let named = ProcessInfo.processInfo.environment["STORYTELLER_PROJECT"], !named.isEmpty {
            return (named, "STORYTELLER_PROJECT=\(named)")
        }
        if let saved = choices().first(where: { $0.socket == socket })?.project { return (saved, "chosen with `storyteller use`") }
        let legacy = (try? String(contentsOf: legacyFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let legacy, !legacy.isEmpty, !choices().contains(where: { _ in true }) else { return nil }
        return (legacy, "chosen with `storyteller use`")
    }

    /// Keeps (or, with nil, forgets) the choice for the daemon behind `socket`.
    static func save(_ id: String?, for socket: String) throws {
        var kept = choices().filter { $0.socket != socket }
        if let id { kept.append((socket, id)) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let text = kept.map { "\($0.socket)\t\($0.project)\n" }.joined()
        try Data(text.utf8).write(to: file, options: .atomic)
        // The old single choice would apply to every daemon: gone once choices are per daemon.
        if FileManager.default.fileExists(atPath: legacyFile.path) { try FileManager.default.removeItem(at: legacyFile) }
    }
}

/// `use [PROJECT]`: chooses the project commands use when they name none.
struct Use: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Choose the project commands use when they name none (shows the current one without PROJECT).",
        discussion: """
            Kept per daemon (per control socket) in $XDG_CONFIG_HOME/storyteller/current-projects; STORYTELLER_PROJECT, when set, overrides it.

            Examples:
              storyteller use "Night Train"
              storyteller shots list            # the shots of Night Train
              storyteller use --clear
            """)
    @Argument(help: "A project: its name, library path (Films/Night Train), id or id prefix.") var project: String?
    @Flag(help: "Forget the choice.") var clear = false
    @OptionGroup var options: ClientOptions

    func run() throws {
        if clear {
            try CurrentProject.save(nil, for: options.client.path)
            if !options.json { print("no current project") }
            return
        }
        let names = Names(options)
        guard let project else {
            guard let (chosen, source) = CurrentProject.chosen(for: options.client.path) else {
                if options.json { print("{}") } else { print("no current project (storyteller use PROJECT)") }
                return
            }
            let id = try names.project(chosen)
            let name = try names.projectSummaries().first { $0.id == id }?.name
            if options.json {
                print(String(decoding: try API.encoder.encode(["id": id, "name": name ?? ""]), as: UTF8.self))
            } else {
                print("\(name ?? id)  [\(id)]  (\(source))")
            }
            return
        }
        let id = try names.project(project)
        try CurrentProject.save(id, for: options.client.path)
        let name = try names.projectSummaries().first { $0.id == id }?.name
        if options.json {
            print(String(decoding: try API.encoder.encode(["id": id, "name": name ?? ""]), as: UTF8.self))
        } else {
            print("using \(name ?? id)  [\(id)]")
            if ProcessInfo.processInfo.environment["STORYTELLER_PROJECT"] != nil {
                printError("STORYTELLER_PROJECT is set and wins over this choice")
            }
        }
    }
}
