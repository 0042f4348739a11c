import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// `storyteller demo`: the mission in one command. Two daemons on loopback in
/// a temporary directory pair up, draw in a shared project, lose their
/// connection, edit on both sides (moving the same shot differently),
/// reconnect and converge; the merged storyboard is printed and everything is
/// stopped and removed.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run two daemons on loopback, edit offline on both, and show them merge.",
        discussion: """
            Needs storytellerd next to this program or on PATH (or --daemon). Leaves nothing behind unless --keep.

            Example:
              storyteller demo --keep
            """)

    @Option(help: "The storytellerd binary (default: next to this program, else on PATH).") var daemon: String?
    @Flag(help: "Keep the temporary directory (databases and logs) for a look afterwards.") var keep = false
    @Flag(help: "Print the merged project as JSON at the end instead of text.") var json = false

    func run() throws {
        let binary = try daemonBinary()
        let root = try makeTemporaryDirectory()
        var machines: [LocalDaemon] = []
        defer {
            for machine in machines { machine.stop() }
            if keep {
                printError("kept \(root)")
            } else {
                try? FileManager.default.removeItem(atPath: root)
            }
        }
        let steps = 7
        func step(_ number: Int, _ text: String) {
            FileHandle.standardError.write(Data("[\(number)/\(steps)] \(text)\n".utf8))
        }

        step(1, "starting two daemons on 127.0.0.1 in \(root)")
        for name in ["ana", "ben"] {
            do {
                machines.append(
                    try LocalDaemon(binary: binary, directory: root + "/" + name, name: name, extraArguments: ["--maintenance-interval", "5"]))
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
        let (ana, ben) = (machines[0], machines[1])

        step(2, "pairing them (each trusts the other's peer id)")
        try ana.call(API.Peer.self, "POST", "/v1/peers", body: API.AddPeer(id: ben.peerID, address: "127.0.0.1:\(ben.port)", name: "ben"))
        try ben.call(API.Peer.self, "POST", "/v1/peers", body: API.AddPeer(id: ana.peerID, address: "127.0.0.1:\(ana.port)", name: "ana"))

        step(3, "ana draws a storyboard and shares it with ben")
        let project = try ana.call(API.Project.self, "POST", "/v1/projects", body: API.CreateProject(name: "Demo storyboard")).id
        let built = try ana.edit(
            project,
            [
                .addScene(at: nil, title: "Opening"),
                .addShot(scene: .created(0), at: nil), .set(.created(1), .caption, .string("Wide")),
                .addShot(scene: .created(0), at: nil), .set(.created(3), .caption, .string("Close-up")),
                .addShot(scene: .created(0), at: nil), .set(.created(5), .caption, .string("Reaction")),
                .addLayer(shot: .created(1), at: nil, name: "ink"), .addLayer(shot: .created(3), at: nil, name: "ink"),
                .addLayer(shot: .created(5), at: nil, name: "ink"),
                .addStroke(layer: .created(7), brush: Brush(), points: Self.circle(x: 0.5, y: 0.5, radius: 0.2)),
                .addStroke(layer: .created(8), brush: Brush(), points: Self.circle(x: 0.4, y: 0.45, radius: 0.3)),
            ])
        let (wide, closeUp, reaction) = (try Self.created(built, 1), try Self.created(built, 3), try Self.created(built, 5))
        let (wideInk, closeInk, reactionInk) = (try Self.created(built, 7), try Self.created(built, 8), try Self.created(built, 9))
        try ana.call(API.Share.self, "PUT", "/v1/projects/\(project)/shares/\(ben.peerID)", body: API.SetShare(mode: "read-write"))
        try waitUntil("ben receives the project") { try ben.shotCount(project) == 3 }

        step(4, "cutting the connection (sync paused on both sides)")
        try ana.call(API.Peer.self, "POST", "/v1/peers/\(ben.peerID)/pause")
        try ben.call(API.Peer.self, "POST", "/v1/peers/\(ana.peerID)/pause")
        try waitUntil("both see the connection gone") { try ana.connectedPeers() == 0 && ben.connectedPeers() == 0 }

        step(5, "editing on both sides while apart")
        // The same shot moved differently: ana puts "Reaction" first, ben puts it second.
        _ = try ana.edit(
            project,
            [
                .move(.id(reaction), to: 0, in: nil),
                .addStroke(layer: .id(reactionInk), brush: Brush(), points: Self.line(from: (0.1, 0.8), to: (0.9, 0.2))),
                .set(.id(wide), .caption, .string("Wide, dawn")),
            ])
        _ = try ben.edit(
            project,
            [
                .move(.id(reaction), to: 1, in: nil),
                .addStroke(layer: .id(wideInk), brush: Brush(), points: Self.line(from: (0.2, 0.2), to: (0.8, 0.8))),
                .addStroke(layer: .id(closeInk), brush: Brush(), points: Self.circle(x: 0.6, y: 0.5, radius: 0.1)),
                .set(.id(closeUp), .notes, .string("Ben: hold two beats longer")),
            ])
        print("ana, offline:  " + (try ana.shotOrder(project)).joined(separator: " | "))
        print("ben, offline:  " + (try ben.shotOrder(project)).joined(separator: " | "))

        step(6, "reconnecting")
        try ana.call(API.Peer.self, "POST", "/v1/peers/\(ben.peerID)/resume")
        try ben.call(API.Peer.self, "POST", "/v1/peers/\(ana.peerID)/resume")
        try waitUntil("both machines converge") {
            let (a, b) = (try ana.scenesJSON(project), try ben.scenesJSON(project))
            return try a == b && ana.strokeCount(project) == 5
        }

        step(7, "merged: both machines show the same storyboard")
        if json {
            print(String(decoding: try ana.raw("GET", "/v1/projects/\(project)"), as: UTF8.self))
            return
        }
        print("merged:        " + (try ana.shotOrder(project)).joined(separator: " | "))
        for scene in try ana.project(project).scenes {
            print("scene \(scene.title ?? "")")
            for shot in scene.shots {
                let strokes = shot.layers.reduce(0) { $0 + $1.strokes.count }
                let notes = shot.notes.map { "  notes: \($0)" } ?? ""
                print("  shot \(shot.label) \(shot.caption ?? ""): \(strokes) stroke(s)\(notes)")
            }
        }
        let kept = (try ana.strokeCount(project), try ben.strokeCount(project))
        print("\(kept.0) of 5 strokes on ana, \(kept.1) of 5 on ben; the concurrent moves of \"Reaction\" resolved to one place on both.")
    }

    private func daemonBinary() throws -> String {
        if let daemon { return daemon }
        let here = (CommandLine.arguments[0] as NSString).resolvingSymlinksInPath
        let candidates =
            [((here as NSString).deletingLastPathComponent as NSString).appendingPathComponent("storytellerd")]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/storytellerd" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            printError("cannot find storytellerd next to this program or on PATH; give it with --daemon PATH")
            throw ExitCode(69)
        }
        return found
    }

    private func makeTemporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("storyteller-demo.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            printError("cannot make a temporary directory")
            throw ExitCode(1)
        }
        return String(cString: made)
    }

    private func waitUntil(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
        if LocalDaemon.poll(every: 0.05, for: seconds, until: condition) { return }
        printError("gave up after \(Int(seconds)) s waiting until \(what)")
        throw ExitCode(1)
    }

    /// The id the `index`th operation of an edit created.
    static func created(_ ids: [OpID?], _ index: Int) throws -> OpID {
        guard index < ids.count, let id = ids[index] else {
            printError("the daemon did not say what operation \(index) of the demo's edit created")
            throw ExitCode(1)
        }
        return id
    }

    static func circle(x: Double, y: Double, radius: Double) -> [Point] {
        (0...32).map { index in
            let angle = Double(index) / 32 * 2 * Double.pi
            return Point(x: x + radius * cos(angle), y: y + radius * sin(angle), pressure: 0.6)
        }
    }

    static func line(from start: (Double, Double), to end: (Double, Double)) -> [Point] {
        (0...16).map { index in
            let t = Double(index) / 16
            return Point(x: start.0 + (end.0 - start.0) * t, y: start.1 + (end.1 - start.1) * t, pressure: 0.4 + 0.4 * t)
        }
    }
}

/// What the demo asks of a daemon, on top of `LocalDaemon`.
extension LocalDaemon {
    /// One edit batch; the ids it created.
    func edit(_ project: String, _ ops: [API.EditOperation]) throws -> [OpID?] {
        try call(API.EditResult.self, "POST", "/v1/projects/\(project)/edits", body: API.EditRequest(ops: ops)).created.map { $0.flatMap(OpID.init) }
    }

    func project(_ project: String) throws -> API.Project { try call(API.Project.self, "GET", "/v1/projects/\(project)") }

    /// The storyboard as this machine shows it (not its own role in it: ana owns it, ben edits it).
    func scenesJSON(_ project: String) throws -> Data { try API.encoder.encode(try self.project(project).scenes) }

    func shots(_ project: String) throws -> [API.Shot] { try self.project(project).scenes.flatMap(\.shots) }

    func shotCount(_ project: String) throws -> Int { try shots(project).count }

    func strokeCount(_ project: String) throws -> Int { try shots(project).flatMap(\.layers).reduce(0) { $0 + $1.strokes.count } }

    func shotOrder(_ project: String) throws -> [String] { try shots(project).map { $0.caption ?? "" } }

    func connectedPeers() throws -> Int { try call(API.Status.self, "GET", "/v1/status").peersConnected }
}
