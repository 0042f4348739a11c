import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

struct Share: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share a project, a folder (with everything in it, now and later) or `library` with a peer.",
        discussion: """
            Read-write makes the peer an editor (it may change what is shared and share it on); \
            --read-only a reader (it receives it; its edits are refused by every machine). A folder \
            share takes in the projects and folders under it, and whatever is created, moved or \
            filed there later; a project moved out leaves it (it keeps its other shares). Sharing a \
            folder again --read-only makes what the peer has only through it read-only too. The peer \
            sees the folder under its name. Only owners and editors may share.

            Examples:
              storyteller share "Night Train" bob
              storyteller share Films bob
              storyteller share "Films/Night Train" client-laptop --read-only
              storyteller share library my-laptop
            """)
    @Argument(help: "A project (name, library path, id or id prefix), a folder (path, as `storyteller tree` shows), or `library`.")
    var target: String
    @Argument(help: Help.peer) var peer: String
    @Flag(help: "The peer receives it but its changes are refused.") var readOnly = false
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        let resolved = try names.shareTarget(target)
        let peerID = try names.peer(peer)
        let share = try options.call(
            API.Share.self, "PUT", "\(resolved.sharesPath)/\(segment(peerID))", body: API.SetShare(mode: readOnly ? "read-only" : "read-write"))
        guard !options.json else { return }
        let what = if case .folder = resolved { "folder \(target)" } else { target }
        print("shared \(what) with \(peer) (\(readOnly ? "read-only" : "read-write"))")
        if let shared = share.shared {
            let projects = shared.filter { $0.kind == "project" }.count
            let folders = shared.count - projects
            var parts = ["\(projects) project\(projects == 1 ? "" : "s")"]
            if folders > 0 { parts.append("\(folders) folder\(folders == 1 ? "" : "s")") }
            print("  \(peer) now has \(parts.joined(separator: " and ")) through it" + (shared.isEmpty ? "" : ":"))
            for document in shared { print("    \(text(document.path ?? document.name))  (\(document.role))") }
        }
        if let notShared = share.notShared, !notShared.isEmpty {
            print("  not shared:")
            for entry in notShared { print("    \(text(entry.path ?? entry.name)): \(entry.reason)") }
        }
    }
}

struct Unshare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop sharing a project, a shared folder or `library` with a peer.",
        discussion: """
            Takes the peer's rights away (the owner's to take); it holds until someone entitled shares again. \
            A folder's projects leave the peer too, unless it has them another way (shared directly, or \
            through another folder or the library): `storyteller shares list --peer PEER` shows why it has what.

            Examples:
              storyteller unshare "Night Train" bob
              storyteller unshare Films bob
            """)
    @Argument(help: "A project (name, library path, id or id prefix), a shared folder (path), or `library`.") var target: String
    @Argument(help: Help.peer) var peer: String
    @OptionGroup var options: ClientOptions

    func run() throws {
        let names = Names(options)
        let resolved = try names.shareTarget(target)
        let answer = try options.call(API.Unshared.self, "DELETE", "\(resolved.sharesPath)/\(segment(try names.peer(peer)))")
        guard !options.json else { return }
        print("unshared \(target) from \(peer)")
        for kept in answer.keeps ?? [] {
            print("  \(peer) keeps it through \(text(kept.via)) (\(kept.role == "editor" ? "read-write" : "read-only"))")
        }
    }
}
