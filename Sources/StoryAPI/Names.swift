import Foundation

/// Finding what a person named: the id, a unique prefix of it (as the CLI
/// prints them), or a name — a peer's, a project's name or library path, a
/// scene's number or title, a shot's label (`1-2`, `1B`), a layer's name.
///
/// The API itself stays id-based; this is the one shared piece any client
/// uses to turn words into ids before asking. It never talks to the daemon:
/// the caller gives the candidates (from `/v1/peers`, `/v1/projects`,
/// `/v1/library`, `/v1/projects/{id}`), so it is the same for every client
/// and tested without one.
extension API {
    /// One thing a name may stand for.
    package struct Candidate: Sendable, Hashable {
        /// The full id, as the API takes it.
        package let id: String
        /// Names that select it exactly (a name, a path, a label, a number).
        package let names: [String]
        /// How to show it in a list of candidates: "Night Train (prj 3f2a9c1)".
        package let display: String

        package init(id: String, names: [String], display: String) {
            self.id = id
            self.names = names.filter { !$0.isEmpty }
            self.display = display
        }
    }

    /// A name that selects nothing, or more than one thing.
    package struct NameError: Error, Sendable, CustomStringConvertible {
        package enum Reason: Sendable, Equatable {
            case notFound(suggestions: [String])
            case ambiguous(candidates: [String])
        }

        /// What was looked for: "project", "shot", "peer" …
        package let kind: String
        package let query: String
        package let reason: Reason
        /// Where to look them up, e.g. "storyteller shots list".
        package let hint: String?
        /// Where the names were looked up when it is not the present, e.g.
        /// "at version 8a87e4be": a shot added since has no label there.
        package var scope: String?

        package init(kind: String, query: String, reason: Reason, hint: String? = nil, scope: String? = nil) {
            self.kind = kind
            self.query = query
            self.reason = reason
            self.hint = hint
            self.scope = scope
        }

        package var description: String {
            let scoped = scope.map { " \($0)" } ?? ""
            switch reason {
            case .notFound(let suggestions):
                var text = "no \(kind) '\(query)'\(scoped)"
                if !suggestions.isEmpty {
                    text += " (did you mean \(suggestions.map { "'\($0)'" }.joined(separator: " or "))?)"
                } else if let hint {
                    text += " (\(hint) lists them)"
                }
                return text
            case .ambiguous(let candidates):
                let shown = candidates.prefix(10)
                var text = "'\(query)' could be any of \(candidates.count) \(kind)s\(scoped):\n"
                text += shown.map { "  \($0)" }.joined(separator: "\n")
                if candidates.count > shown.count { text += "\n  … and \(candidates.count - shown.count) more" }
                text += "\ngive more of the id, or the whole name"
                return text
            }
        }
    }

    /// The candidate `query` names. In order: the whole id; a name exactly;
    /// a name ignoring case; a prefix of the id (ignoring case and the
    /// dashes of peer ids). Several at the first rule that matches is an
    /// ambiguity; none at all is `notFound` with the nearest names.
    /// - Throws: `NameError`.
    package static func resolve(_ query: String, among candidates: [Candidate], kind: String, hint: String? = nil) throws(NameError)
        -> Candidate
    {
        let trimmed = query.trimmingCharacters(in: .whitespaces)
        func pick(_ matches: [Candidate]) throws(NameError) -> Candidate? {
            let unique = Array(Set(matches.map(\.id)))
            if unique.count == 1 { return matches.first }
            guard matches.isEmpty else {
                var seen = Set<String>()
                let listed = matches.filter { seen.insert($0.id).inserted }.map(\.display)
                throw NameError(kind: kind, query: query, reason: .ambiguous(candidates: listed), hint: hint)
            }
            return nil
        }
        guard !trimmed.isEmpty else {
            throw NameError(kind: kind, query: query, reason: .notFound(suggestions: []), hint: hint)
        }
        if let exact = candidates.first(where: { $0.id == trimmed }) { return exact }
        if let match = try pick(candidates.filter { $0.names.contains(trimmed) }) { return match }
        let folded = trimmed.lowercased()
        if let match = try pick(candidates.filter { $0.names.contains { $0.lowercased() == folded } }) { return match }
        let compact = idKey(trimmed)
        if !compact.isEmpty, let match = try pick(candidates.filter { idKey($0.id).hasPrefix(compact) }) { return match }
        throw NameError(kind: kind, query: query, reason: .notFound(suggestions: suggestions(for: trimmed, among: candidates)), hint: hint)
    }

    /// An id as prefixes compare it: lower case, without dashes.
    private static func idKey(_ text: String) -> String { text.lowercased().replacingOccurrences(of: "-", with: "") }

    /// Up to three names close to `query`: containing it, or a few edits away.
    static func suggestions(for query: String, among candidates: [Candidate]) -> [String] {
        suggestions(for: query, among: candidates.flatMap(\.names))
    }

    /// Up to three of `names` close to `query`: containing it, or a few edits
    /// away (a mistyped config key, a name of an object).
    package static func suggestions(for query: String, among names: [String]) -> [String] {
        let folded = query.lowercased()
        var scored: [(name: String, score: Int)] = []
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted {
            let lower = name.lowercased()
            if lower.count > 2, folded.count > 2, lower.contains(folded) || folded.contains(lower) {
                scored.append((name, 0))
            } else {
                let distance = editDistance(folded, lower)
                if distance <= max(1, min(folded.count, lower.count) / 3) { scored.append((name, distance)) }
            }
        }
        return scored.sorted { ($0.score, $0.name) < ($1.score, $1.name) }.prefix(3).map(\.name)
    }

    /// Levenshtein distance (for "did you mean").
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The shortest prefix of each id (at least `minimum` characters) that no
    /// other id in `ids` shares: what lists print and `resolve` takes back.
    package static func shortIDs(_ ids: [String], minimum: Int = 7) -> [String: String] {
        var result: [String: String] = [:]
        let sorted = Array(Set(ids)).sorted()
        for (index, id) in sorted.enumerated() {
            var length = min(minimum, id.count)
            func shared(_ other: String) -> Int { zip(id, other).prefix { $0 == $1 }.count }
            if index > 0 { length = max(length, shared(sorted[index - 1]) + 1) }
            if index + 1 < sorted.count { length = max(length, shared(sorted[index + 1]) + 1) }
            result[id] = String(id.prefix(length))
        }
        return result
    }
}

// MARK: - Candidates from the API's answers

extension API {
    /// Configured (and, with `pending`, pending) peers: by id prefix or name.
    package static func peerCandidates(_ peers: [Peer]) -> [Candidate] {
        peers.map { peer in
            let short = String(peer.id.prefix(7))
            return Candidate(
                id: peer.id, names: [peer.name, peer.announcedName].compactMap { $0 },
                display: "\(peer.name ?? peer.announcedName ?? "(no name)")  \(short)")
        }
    }

    /// Projects: by id prefix, name, or library path (`Films/Night Train`).
    package static func projectCandidates(_ projects: [ProjectSummary], library: Library?) -> [Candidate] {
        let paths = library.map(projectPaths) ?? [:]
        let short = shortIDs(projects.map(\.id))
        return projects.map { project in
            let projectPaths = paths[project.id] ?? []
            let name = project.name ?? "(untitled)"
            return Candidate(
                id: project.id, names: [project.name].compactMap { $0 } + projectPaths,
                display: "\(projectPaths.first ?? name)  \(short[project.id] ?? project.id)\(project.deleted ? "  (deleted)" : "")")
        }
    }

    /// The names from the top down to `node` (its own last), walking parents
    /// through `byID` (at most 256 steps), with the name of a shared folder
    /// at the top when the walk ends at one of `tops`.
    static func names(of node: LibraryNode, byID: [String: LibraryNode], tops: [String: String] = [:]) -> [String] {
        var names = [node.name ?? ""]
        var parent = node.parent
        var steps = 0
        while let folder = byID[parent], steps < 256 {
            names.append(folder.name ?? "")
            parent = folder.parent
            steps += 1
        }
        if let top = tops[parent] { names.append(top) }
        return names.reversed()
    }

    /// Folders of the library (shared folders too, and those peers share with
    /// this daemon): by path (`Films/Shorts`) or node id.
    package static func folderCandidates(_ library: Library) -> [Candidate] {
        var result: [Candidate] = []
        func add(_ nodes: [LibraryNode], top: String?) {
            var byID: [String: LibraryNode] = [:]
            for node in nodes { byID[node.id] = node }
            for node in nodes where node.kind == "folder" && !node.inTrash && node.id != "incoming" {
                let path = ((top.map { [$0] } ?? []) + Self.names(of: node, byID: byID)).joined(separator: "/")
                result.append(Candidate(id: node.id, names: [path], display: "folder \(path)\(node.folder != nil ? " (shared)" : "")"))
            }
        }
        add(library.nodes, top: nil)
        for shared in library.shared {
            let name = shared.name ?? "Library"
            result.append(Candidate(id: "\(shared.id):root", names: [name], display: "folder \(name) (shared with you)"))
            add(shared.nodes, top: name)
        }
        return result
    }

    /// Each project's paths in the library, folder names joined by `/`.
    package static func projectPaths(_ library: Library) -> [String: [String]] {
        var byID: [String: LibraryNode] = [:]
        let everything = library.nodes + library.shared.flatMap(\.nodes)
        for node in everything { byID[node.id] = node }
        var tops: [String: String] = [:]
        for shared in library.shared { tops["\(shared.id):root"] = shared.name ?? "Library" }
        var paths: [String: [String]] = [:]
        for node in everything where node.kind == "project" && !node.inTrash {
            guard let project = node.project else { continue }
            paths[project, default: []].append(Self.names(of: node, byID: byID, tops: tops).joined(separator: "/"))
        }
        return paths
    }

    /// A project's scenes: by number (`2`), title, or id prefix.
    package static func sceneCandidates(_ project: Project) -> [Candidate] {
        let short = shortIDs(project.scenes.map(\.id))
        return project.scenes.map { scene in
            Candidate(
                id: scene.id, names: ["\(scene.number)", scene.title].compactMap { $0 },
                display: "scene \(scene.number)\(scene.title.map { " \($0)" } ?? "")  \(short[scene.id] ?? scene.id)")
        }
    }

    /// A project's shots: by label (`2-3`), letter label (`2C`), or id prefix.
    package static func shotCandidates(_ project: Project) -> [Candidate] {
        let short = shortIDs(project.scenes.flatMap { $0.shots.map(\.id) })
        return project.scenes.flatMap { scene in
            scene.shots.enumerated().map { index, shot in
                Candidate(
                    id: shot.id, names: [shot.label, "\(scene.number)\(letterLabel(index))"],
                    display: "shot \(shot.label)\(shot.caption.map { " \($0)" } ?? "")  \(short[shot.id] ?? shot.id)")
            }
        }
    }

    /// `A` … `Z`, `AA` …: the letter form of a shot's place in its scene (0-based).
    package static func letterLabel(_ index: Int) -> String {
        var index = index
        var letters = ""
        repeat {
            letters = String(UnicodeScalar(UInt8(65 + index % 26))) + letters
            index = index / 26 - 1
        } while index >= 0
        return letters
    }

    /// Layers: by name within `shot` (every shot's when nil, shown with the
    /// shot label), or `SHOT/NAME` (`1-2/Ink`), or id prefix.
    package static func layerCandidates(_ project: Project, shot: String? = nil) -> [Candidate] {
        let shots = project.scenes.flatMap { scene in scene.shots.enumerated().map { (scene.number, $0.offset, $0.element) } }
        let short = shortIDs(shots.flatMap { $0.2.layers.map(\.id) })
        return shots.filter { shot == nil || $0.2.id == shot }.flatMap { sceneNumber, index, item in
            item.layers.map { layer in
                let name = layer.name ?? ""
                var names = [name]
                if !name.isEmpty { names += ["\(item.label)/\(name)", "\(sceneNumber)\(letterLabel(index))/\(name)"] }
                return Candidate(
                    id: layer.id, names: names,
                    display: "layer \(name.isEmpty ? "(no name)" : name) in shot \(item.label)  \(short[layer.id] ?? layer.id)")
            }
        }
    }

    /// A layer's strokes: by their number in the layer (`1` is the first
    /// drawn that is still there, as `strokes list` shows) or id prefix.
    package static func strokeCandidates(_ layer: Layer) -> [Candidate] {
        let short = shortIDs(layer.strokes.map(\.id))
        return layer.strokes.enumerated().map { index, stroke in
            Candidate(
                id: stroke.id, names: ["\(index + 1)"],
                display: "stroke \(index + 1) (\(stroke.brush.tool) \(stroke.brush.color))  \(short[stroke.id] ?? stroke.id)")
        }
    }
}
