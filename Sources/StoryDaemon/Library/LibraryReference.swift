import Foundation
import StoryAPI
import StoryCore

/// Names a library node in a request: a node id (`12@3f…`), one of the
/// well-known folders (`root`, `trash`, `incoming`), or a path of names from
/// the root (`Films/Shorts`), which must name exactly one node.
enum LibraryReference {
    static let wellKnown: [String: OpID] = ["root": .root, "trash": .trash, "incoming": .incoming]

    static func text(of id: OpID) -> String {
        switch id {
        case .root: "root"
        case .trash: "trash"
        case .incoming: "incoming"
        default: id.description
        }
    }

    /// Resolves a reference; `inTrash` also searches the trash by path.
    static func resolve(_ reference: String, in view: LibraryView, inTrash: Bool = false) throws(APIError) -> OpID {
        let text = reference.trimmingCharacters(in: .whitespaces)
        if let known = wellKnown[text.lowercased()] { return known }
        if let id = OpID(text) {
            guard view.node(id) != nil else { throw APIError(.notFound, "no folder or project entry \(text)") }
            return id
        }
        let names = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !names.isEmpty else { throw APIError(.badRequest, "'\(reference)' names no folder or project") }
        var candidates: [OpID] = [inTrash ? .trash : .root]
        for (index, name) in names.enumerated() {
            candidates = candidates.flatMap { parent in
                view.nodes.filter { $0.parent == parent && $0.name == name && (index > 0 || $0.isInTrash == inTrash) }.map(\.id)
            }
        }
        guard let first = candidates.first else { throw APIError(.notFound, "no folder or project at '\(reference)'") }
        guard candidates.count == 1 else {
            throw APIError(
                .conflict,
                "'\(reference)' names \(candidates.count) folders or projects; give its path from the top, or its id (storyteller tree --json)")
        }
        return first
    }
}
