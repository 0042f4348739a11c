import ArgumentParser
import Foundation
import StoryClient

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
                machines.append(try LocalDaemon(binary: binary, directory: root + "/" + name, name: name, extraArguments: ["--maintenance-interval", "5"]))
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
        }
        let (ana, ben) = (machines[0], machines[1])

        step(2, "pairing them (each trusts the other's peer id)")
        try ana.call("POST", "/v1/peers", ["id": ben.peerID, "address": "127.0.0.1:\(ben.port)", "name": "ben"])
        try ben.call("POST", "/v1/peers", ["id": ana.peerID, "address": "127.0.0.1:\(ana.port)", "name": "ana"])

        step(3, "ana draws a storyboard and shares it with ben")
        let project = try ana.call("POST", "/v1/projects", ["name": "Demo storyboard"])["id"] as? String ?? ""
        let built = try ana.edit(project, [
            ["op": "scene.add", "title": "Opening"],
            ["op": "shot.add", "scene": "$0"], ["op": "set", "object": "$1", "field": "caption", "value": "Wide"],
            ["op": "shot.add", "scene": "$0"], ["op": "set", "object": "$3", "field": "caption", "value": "Close-up"],
            ["op": "shot.add", "scene": "$0"], ["op": "set", "object": "$5", "field": "caption", "value": "Reaction"],
            ["op": "layer.add", "shot": "$1", "name": "ink"], ["op": "layer.add", "shot": "$3", "name": "ink"],
            ["op": "layer.add", "shot": "$5", "name": "ink"],
            ["op": "stroke.add", "layer": "$7", "points": Self.circle(x: 0.5, y: 0.5, radius: 0.2)],
            ["op": "stroke.add", "layer": "$8", "points": Self.circle(x: 0.4, y: 0.45, radius: 0.3)],
        ])
        let (wide, closeUp, reaction) = (built[1], built[3], built[5])
        let (wideInk, closeInk, reactionInk) = (built[7], built[8], built[9])
        try ana.call("PUT", "/v1/projects/\(project)/shares/\(ben.peerID)", ["mode": "read-write"])
        try waitUntil("ben receives the project") { try ben.shotCount(project) == 3 }

        step(4, "cutting the connection (sync paused on both sides)")
        try ana.call("POST", "/v1/peers/\(ben.peerID)/pause")
        try ben.call("POST", "/v1/peers/\(ana.peerID)/pause")
        try waitUntil("both see the connection gone") { try ana.connectedPeers() == 0 && ben.connectedPeers() == 0 }

        step(5, "editing on both sides while apart")
        // The same shot moved differently: ana puts "Reaction" first, ben puts it second.
        _ = try ana.edit(project, [
            ["op": "move", "object": reaction, "to": 0],
            ["op": "stroke.add", "layer": reactionInk, "points": Self.line(from: (0.1, 0.8), to: (0.9, 0.2))],
            ["op": "set", "object": wide, "field": "caption", "value": "Wide, dawn"],
        ])
        _ = try ben.edit(project, [
            ["op": "move", "object": reaction, "to": 1],
            ["op": "stroke.add", "layer": wideInk, "points": Self.line(from: (0.2, 0.2), to: (0.8, 0.8))],
            ["op": "stroke.add", "layer": closeInk, "points": Self.circle(x: 0.6, y: 0.5, radius: 0.1)],
            ["op": "set", "object": closeUp, "field": "notes", "value": "Ben: hold two beats longer"],
        ])
        print("ana, offline:  " + (try ana.shotOrder(project)).joined(separator: " | "))
        print("ben, offline:  " + (try ben.shotOrder(project)).joined(separator: " | "))

        step(6, "reconnecting")
        try ana.call("POST", "/v1/peers/\(ben.peerID)/resume")
        try ben.call("POST", "/v1/peers/\(ana.peerID)/resume")
        try waitUntil("both machines converge") {
            let (a, b) = (try ana.projectJSON(project), try ben.projectJSON(project))
            return try a == b && ana.strokeCount(project) == 5
        }

        step(7, "merged: both machines show the same storyboard")
        if json {
            print(String(decoding: try ana.raw("GET", "/v1/projects/\(project)"), as: UTF8.self))
            return
        }
        print("merged:        " + (try ana.shotOrder(project)).joined(separator: " | "))
        let merged = try ana.call("GET", "/v1/projects/\(project)")
        for scene in merged["scenes"] as? [[String: Any]] ?? [] {
            print("scene \(text(scene["title"]))")
            for shot in scene["shots"] as? [[String: Any]] ?? [] {
                let strokes = (shot["layers"] as? [[String: Any]] ?? []).reduce(0) { $0 + (($1["strokes"] as? [Any])?.count ?? 0) }
                let notes = (shot["notes"] as? String).map { "  notes: \($0)" } ?? ""
                print("  shot \(text(shot["label"])) \(text(shot["caption"])): \(strokes) stroke(s)\(notes)")
            }
        }
        let kept = (try ana.strokeCount(project), try ben.strokeCount(project))
        print("\(kept.0) of 5 strokes on ana, \(kept.1) of 5 on ben; the concurrent moves of \"Reaction\" resolved to one place on both.")
    }

    private func daemonBinary() throws -> String {
        if let daemon { return daemon }
        let here = (CommandLine.arguments[0] as NSString).resolvingSymlinksInPath
        let candidates = [((here as NSString).deletingLastPathComponent as NSString).appendingPathComponent("storytellerd")]
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

    static func circle(x: Double, y: Double, radius: Double) -> [Double] {
        (0...32).flatMap { index -> [Double] in
            let angle = Double(index) / 32 * 2 * Double.pi
            return [x + radius * cos(angle), y + radius * sin(angle), 0.6]
        }
    }

    static func line(from start: (Double, Double), to end: (Double, Double)) -> [Double] {
        (0...16).flatMap { index -> [Double] in
            let t = Double(index) / 16
            return [start.0 + (end.0 - start.0) * t, start.1 + (end.1 - start.1) * t, 0.4 + 0.4 * t]
        }
    }
}

/// What the demo asks of a daemon, on top of `LocalDaemon`.
extension LocalDaemon {
    /// One edit batch; the ids it created.
    func edit(_ project: String, _ ops: [[String: Any]]) throws -> [String] {
        let result = try call("POST", "/v1/projects/\(project)/edits", ["ops": ops])
        return (result["created"] as? [Any] ?? []).map { $0 as? String ?? "" }
    }

    /// The project as this machine shows it, less its own role in it (ana owns it, ben edits it).
    func projectJSON(_ project: String) throws -> Data {
        var body = try call("GET", "/v1/projects/\(project)")
        body["role"] = nil
        body["readOnly"] = nil
        return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
    }

    func shotCount(_ project: String) throws -> Int { try shots(project).count }

    func shotOrder(_ project: String) throws -> [String] { try shots(project).map { text($0["caption"]) } }

    func connectedPeers() throws -> Int { (try call("GET", "/v1/status")["peersConnected"] as? Int) ?? -1 }
}
