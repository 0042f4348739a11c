import ArgumentParser
import Foundation
import StoryAPI

/// `shares`: what is shared with whom and why; offers waiting for a decision.
struct Shares: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What is shared with which peer and why; documents peers offer that wait for you.",
        subcommands: [List.self, Pending.self, Accept.self, Decline.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every share: what, with whom, which rights, and why (directly, through a folder, the library).",
            discussion: "Examples:\n  storyteller shares\n  storyteller shares list --peer bob")
        @Option(help: "Only this peer's (name, id or id prefix).") var peer: String?
        @OptionGroup var options: ClientOptions

        func run() throws {
            let names = Names(options)
            let target = "/v1/shares" + (try peer.map { "?peer=\(segment(try names.peer($0)))" } ?? "")
            let shares = try options.call([API.ShareListing].self, "GET", target)
            guard !options.json else { return }
            guard !shares.isEmpty else {
                print(peer == nil ? "nothing is shared (storyteller share PROJECT|FOLDER PEER)" : "nothing is shared with \(peer!)")
                return
            }
            let me = try? names.quietIdentity()
            printTable(
                ["SHARED", "WITH", "RIGHTS", "WHY"],
                shares.map { share in
                    let what =
                        share.kind == "library"
                        ? "the library"
                        : share.kind == "folder"
                            ? "\(share.path ?? share.name ?? "?")/" : share.path ?? share.name ?? String(share.document.prefix(7))
                    return [
                        what, names.who(share.peer, local: false, me: me),
                        share.role == "reader" ? "read-only" : share.role == "owner" ? "owner" : "read-write",
                        share.via.joined(separator: ", "),
                    ]
                })
        }
    }

    struct Pending: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Projects and folders peers offer that wait for you to accept or decline.",
            discussion: """
                Offers wait here from peers whose shares are not taken automatically \\
                (storyteller peers set PEER --auto-accept off).

                Example:
                  storyteller shares pending
                """)
        @OptionGroup var options: ClientOptions

        func run() throws {
            let offers = try options.call([API.Offer].self, "GET", "/v1/shares/pending")
            guard !options.json else { return }
            let names = Names(options)
            let me = try? names.quietIdentity()
            // Offers beyond what is kept per peer were dropped, the oldest first: say how many.
            let dropped = ((try? options.call([API.Peer].self, "GET", "/v1/peers")) ?? []).filter { ($0.offersDropped ?? 0) > 0 }
            defer {
                for peer in dropped {
                    print(
                        "(\(peer.offersDropped ?? 0) older offer(s) from \(names.who(peer.id, local: false, me: me)) were dropped: at most 200 wait per peer)"
                    )
                }
            }
            guard !offers.isEmpty else { return print("nothing waits (peers' shares are taken as they come, or none offered anything)") }
            let short = API.shortIDs(offers.map(\.document))
            printTable(
                ["OFFERED", "KIND", "BY", "WHEN", "ID"],
                offers.map { offer in
                    [
                        offer.name ?? "(no name)", offer.kind == "library" ? "folder" : offer.kind, names.who(offer.peer, local: false, me: me),
                        isoTime(milliseconds: offer.received), short[offer.document] ?? offer.document,
                    ]
                })
        }
    }

    struct Accept: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take an offered project or folder (it syncs at once if the peer is connected).",
            discussion: "Example:\n  storyteller shares accept \"Night Train\"")
        @Argument(help: "The offer: its name or id prefix (as `storyteller shares pending` shows).") var offer: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Offers.resolve(offer, options: options)
            let taken = try options.call(API.Offer.self, "POST", "/v1/shares/pending/\(segment(id))/accept")
            if !options.json { print("accepted \(taken.name ?? id); it syncs from \(Names(options).who(taken.peer, local: false, me: nil))") }
        }
    }

    struct Decline: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decline an offered project or folder (the peer offering it again is ignored).",
            discussion: "Example:\n  storyteller shares decline \"Night Train\"")
        @Argument(help: "The offer: its name or id prefix (as `storyteller shares pending` shows).") var offer: String
        @OptionGroup var options: ClientOptions

        func run() throws {
            let id = try Offers.resolve(offer, options: options)
            let declined = try options.call(API.Offer.self, "POST", "/v1/shares/pending/\(segment(id))/decline")
            if !options.json { print("declined \(declined.name ?? id)") }
        }
    }
}

private enum Offers {
    /// An offer named by its document's name, id or id prefix.
    static func resolve(_ text: String, options: ClientOptions) throws -> String {
        var quiet = options
        quiet.json = false
        let offers = try quiet.call([API.Offer].self, "GET", "/v1/shares/pending")
        let candidates = offers.map {
            API.Candidate(id: $0.document, names: [$0.name].compactMap { $0 }, display: "\($0.name ?? "?")  \($0.document.prefix(7))")
        }
        do {
            return try API.resolve(text, among: candidates, kind: "offer", hint: "`storyteller shares pending`").id
        } catch {
            printError(error.description)
            throw ExitCode(64)
        }
    }
}
