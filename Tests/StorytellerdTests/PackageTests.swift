import Foundation
import StoryClient
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing
import ZIPFoundation

/// Project packages through real daemons and the CLI: a round trip to a
/// fresh daemon, edits on both sides merged through packages both ways, media
/// byte for byte, a zip `unzip` reads; bad files refused with nothing stored.
/// The daemons never sync with each other (no addresses, no discovery): what
/// moves, moves in the package.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct PackageTests {
    /// `projects show --json` without what differs by machine (its rights here).
    func board(_ project: String, on daemon: StartedDaemon) async throws -> NSDictionary {
        var shown = try #require(try await daemon.json("projects", "show", project) as? [String: Any])
        shown["role"] = nil
        shown["readOnly"] = nil
        return shown as NSDictionary
    }

    func write(_ bytes: [UInt8], named name: String, in directory: TemporaryDirectory) -> String {
        let path = directory.path + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// A project on `a` with two shots, ink and an image, shared read-write with `b`.
    func makeBoard(on a: StartedDaemon, sharedWith b: StartedDaemon, picture: String) async throws -> String {
        #expect(try await a.cli("peers", "add", try b.peerID(), "--name", "b").status == 0)
        let project = try await a.cli("projects", "create", "Night Train").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await a.cli("scenes", "add", project).status == 0)
        #expect(try await a.cli("shots", "add", project, "1").status == 0)
        #expect(try await a.cli("shots", "add", project, "1").status == 0)
        #expect(try await a.cli("layers", "add", project, "1-1", "--name", "ink").status == 0)
        let drawn = try await a.cli("strokes", "add", project, "1-1/ink", "--points", "[0.1,0.1,0.5,0.5,0.9,0.5]")
        #expect(drawn.status == 0, "\(drawn.errors)")
        let added = try await a.cli("images", "add", project, "1-2", picture, "--name", "Plate")
        #expect(added.status == 0, "\(added.errors)")
        #expect(try await a.cli("share", project, "b").status == 0)
        return project
    }

    func export(_ project: String, from daemon: StartedDaemon, to path: String) async throws {
        let result = try await daemon.cli("export", "package", project, "--out", path)
        #expect(result.status == 0, "\(result.errors)")
    }

    func importing(_ path: String, into daemon: StartedDaemon, _ extra: String...) async throws -> [String: Any] {
        let result = try await storyteller(["import", path] + extra + ["--json", "--socket", daemon.socket])
        #expect(result.status == 0, "\(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    @Test(.requires("pdftotext", "unzip")) func aPackageRoundTripsAndEditsOnBothSidesMergeBothWays() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let a = try await StartedDaemon.start(name: "a", ["--no-discovery"])
        defer { a.stop() }
        let b = try await StartedDaemon.start(name: "b", ["--no-discovery"])
        defer { b.stop() }
        let picture = TestMedia.png(width: 300, height: 200, seed: 5)
        let project = try await makeBoard(on: a, sharedWith: b, picture: write(picture, named: "plate.png", in: files))
        let package = files.path + "/night-train.storyboard"
        try await export(project, from: a, to: package)

        // An independent tool sees a valid zip with the manifest and a thumbnail per shot.
        let (tested, testOutput) = try await ExternalProgram.run("unzip", ["-t", package])
        #expect(tested == 0 && testOutput.contains("No errors detected"), "\(testOutput)")
        let (_, listing) = try await ExternalProgram.run("unzip", ["-l", package])
        for name in [
            "manifest.json", "manifest.sig", "project/snapshot.bin", "project/changes.bin", "thumbnails/001 shot 1-1.png",
            "thumbnails/002 shot 1-2.png", "README.txt", "sheets.pdf",
        ] {
            #expect(listing.contains(name), "unzip -l lists \(name): \(listing)")
        }
        let (_, manifestText) = try await ExternalProgram.run("unzip", ["-p", package, "manifest.json"])
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(manifestText.utf8)) as? [String: Any])
        #expect(manifest["format"] as? String == "storyteller-project-package" && manifest["formatVersion"] as? Int == 1)
        #expect(manifest["project"] as? String == project && manifest["title"] as? String == "Night Train")
        #expect((manifest["optional"] as? [String: Any])?["sheets.pdf"] == nil, "the print sheet is in, not optional")
        #expect(
            (manifest["entries"] as? [[String: Any]] ?? []).contains { $0["path"] as? String == "sheets.pdf" && $0["role"] as? String == "sheets" })
        // The print sheet, read by poppler: the board's title and shot labels are on its page.
        let sheet = files.path + "/sheets.pdf"
        let (extracted, _) = try await ExternalProgram.run("unzip", ["-o", "-q", package, "sheets.pdf", "-d", files.path])
        #expect(extracted == 0)
        let (_, sheetText) = try await ExternalProgram.run("pdftotext", [sheet, "-"])
        #expect(sheetText.contains("Night Train") && sheetText.contains("1-1") && sheetText.contains("1-2"), "\(sheetText)")

        // Imported on a fresh daemon: the same board, its image byte for byte, editable (b was given the right).
        let added = try await importing(package, into: b, "--folder", "root")
        #expect(added["outcome"] as? String == "added" && added["project"] as? String == project, "\(added)")
        #expect(added["blobsAdded"] as? Int == 1 && added["role"] as? String == "editor", "\(added)")
        #expect(try await board(project, on: b) == board(project, on: a))
        let got = files.path + "/got.png"
        let hash = OpenSSLCrypto.shared.sha256(nil, picture[...]).description
        #expect(try await b.cli("media", "get", project, String(hash.prefix(12)), "--out", got).status == 0)
        #expect(FileManager.default.contents(atPath: got).map { Array($0) } == picture)
        #expect(try await b.cli("tree").output.contains("Night Train"))

        // Again: nothing new.
        let again = try await importing(package, into: b)
        #expect(again["outcome"] as? String == "merged" && again["newChanges"] as? Int == 0 && again["blobsAdded"] as? Int == 0)

        // Both edit, offline from each other; packages carry the edits both ways.
        #expect(try await a.cli("strokes", "add", project, "1-1/ink", "--points", "[0.2,0.8,0.5,0.3,0.7,0.5]").status == 0)
        #expect(try await a.cli("shots", "set", project, "1-2", "--caption", "from a").status == 0)
        #expect(try await b.cli("layers", "add", project, "1-2", "--name", "b-ink").status == 0)
        #expect(try await b.cli("strokes", "add", project, "1-2/b-ink", "--points", "[0.5,0.5,0.5,0.6,0.6,0.5]").status == 0)
        let fromA = files.path + "/from-a.storyboard"
        let fromB = files.path + "/from-b.storyboard"
        try await export(project, from: a, to: fromA)
        try await export(project, from: b, to: fromB)
        let intoB = try await importing(fromA, into: b)
        #expect(intoB["outcome"] as? String == "merged" && (intoB["newChanges"] as? Int ?? 0) >= 2, "\(intoB)")
        let intoA = try await importing(fromB, into: a)
        #expect(intoA["outcome"] as? String == "merged" && (intoA["newChanges"] as? Int ?? 0) >= 2, "\(intoA)")
        let merged = try await board(project, on: a)
        #expect(merged == (try await board(project, on: b)))
        let text = String(decoding: try JSONSerialization.data(withJSONObject: merged), as: UTF8.self)
        #expect(text.contains("from a") && text.contains("b-ink"), "both sides' edits are in the merged board")
    }

    /// Two daemons (no discovery), a board made on a and shared with b, and
    /// its package exported into `files` as `good.storyboard`.
    func exportedBoard(in files: TemporaryDirectory) async throws -> (a: StartedDaemon, b: StartedDaemon, project: String, good: String) {
        let a = try await StartedDaemon.start(name: "a", ["--no-discovery"])
        var b: StartedDaemon?
        do {
            b = try await StartedDaemon.start(name: "b", ["--no-discovery"])
            let project = try await makeBoard(
                on: a, sharedWith: b!, picture: write(TestMedia.png(width: 64, height: 48, seed: 2), named: "p.png", in: files))
            let good = files.path + "/good.storyboard"
            try await export(project, from: a, to: good)
            return (a, b!, project, good)
        } catch {
            a.stop()
            b?.stop()
            throw error
        }
    }

    @Test func badFilesAreRefusedWithNothingStoredAndTheDaemonServesOn() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let (a, b, project, good) = try await exportedBoard(in: files)
        defer {
            a.stop()
            b.stop()
        }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: good)))
        // b has a project of its own, and has taken in the project once.
        let own = try await b.cli("projects", "create", "Own").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await b.cli("scenes", "add", own).status == 0)
        let before = await (try await b.cli("projects", "list", "--json").output, try board(own, on: b))

        // A flipped byte inside a stored entry (the first thumbnail's pixels).
        var flipped = bytes
        let png = try #require(Self.find([0x89, 0x50, 0x4E, 0x47], in: bytes))
        flipped[png + 200] ^= 0x40
        // An entry replaced with other bytes, its zip CRC right: only the manifest's SHA-256 catches it.
        let tampered = try rewritten(good, in: files, named: "tampered") { path, data in
            path == "project/snapshot.bin" ? Data(data.reversed()) : data
        }
        // A package of a future format.
        let future = try rewritten(good, in: files, named: "future") { path, data in
            path == "manifest.json"
                ? Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 7").utf8)
                : data
        }
        let randomZip = files.path + "/random.zip"
        let archive = try Archive(url: URL(fileURLWithPath: randomZip), accessMode: .create)
        try archive.addEntry(with: "notes.txt", type: .file, uncompressedSize: Int64(5)) { (_: Int64, _: Int) in Data("hello".utf8) }

        let cases: [(String, String, String)] = [
            ("truncated", write(Array(bytes.prefix(bytes.count * 2 / 3)), named: "cut.storyboard", in: files), "cut-off"),
            ("flipped", write(flipped, named: "flipped.storyboard", in: files), "damaged"),
            ("tampered", tampered, "SHA-256 differs"),
            ("future", future, "newer Storyteller"),
            ("random zip", randomZip, "no manifest.json"),
            ("text", write(Array("just some words\n".utf8), named: "notes.storyboard", in: files), "text"),
        ]
        for (what, path, words) in cases {
            let result = try await b.cli("import", path)
            #expect(result.status == 1, "\(what): exit \(result.status)")
            #expect(result.errors.contains("nothing stored") && result.errors.contains(words), "\(what): \(result.errors)")
        }
        // Nothing of any of them stored; the daemon still serves (and takes the good one).
        #expect(try await b.cli("projects", "list", "--json").output == before.0)
        #expect(try await board(own, on: b) == before.1)
        #expect(try b.client.get("/v1/projects/\(project)").status == 404)
        let scratch = try FileManager.default.contentsOfDirectory(atPath: b.home.path + "/blobs/tmp")
        #expect(scratch.isEmpty, "no staged blob left: \(scratch)")
        #expect(try await importing(good, into: b)["outcome"] as? String == "added")
    }

    /// A zip bomb: a package whose snapshot, deflated, is a few hundred
    /// kilobytes and inflates to 256 MiB. Refused before a byte of it is
    /// inflated, saying why, nothing stored, also two at once (imports are
    /// checked one at a time; `storyteller-bench hostile` measures the
    /// memory); the daemon serves on and takes a good package.
    @Test func aZipBombIsRefusedBeforeItInflatesEvenTwoAtOnce() async throws {
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let (a, b, _, good) = try await exportedBoard(in: files)
        defer {
            a.stop()
            b.stop()
        }
        // The good package's entries, with the snapshot swapped for 256 MiB of zeros, deflated.
        let input = try Archive(url: URL(fileURLWithPath: good), accessMode: .read)
        let bomb = files.path + "/bomb.storyboard"
        let output = try Archive(url: URL(fileURLWithPath: bomb), accessMode: .create)
        for entry in input {
            if entry.path == "project/snapshot.bin" {
                let size: Int64 = 256 << 20
                let zeros = Data(count: 1 << 20)
                try output.addEntry(with: entry.path, type: .file, uncompressedSize: size, compressionMethod: .deflate) {
                    (position: Int64, count: Int) in
                    zeros.prefix(count)
                }
                continue
            }
            var data = Data()
            _ = try input.extract(entry) { data.append($0) }
            try output.addEntry(with: entry.path, type: .file, uncompressedSize: Int64(data.count)) { (position: Int64, count: Int) in
                data.subdata(in: Int(position)..<Int(position) + count)
            }
        }
        let bombBytes = try #require(try FileManager.default.attributesOfItem(atPath: bomb)[.size] as? NSNumber).intValue
        #expect(bombBytes < 2 << 20, "the bomb is \(bombBytes) bytes")
        let before = try await b.cli("projects", "list", "--json").output
        // Two at once: each refused, in words, nothing stored.
        async let first = b.cli("import", bomb)
        async let second = b.cli("import", bomb)
        for result in try await [first, second] {
            #expect(result.status == 1)
            #expect(result.errors.contains("zip bomb") && result.errors.contains("nothing stored"), "\(result.errors)")
        }
        #expect(try await b.cli("projects", "list", "--json").output == before)
        #expect(try await importing(good, into: b)["outcome"] as? String == "added")
    }

    /// A copy of the package at `source` with each entry's bytes passed through `change` (CRCs made anew).
    func rewritten(_ source: String, in directory: TemporaryDirectory, named name: String, _ change: (String, Data) -> Data) throws -> String {
        let input = try Archive(url: URL(fileURLWithPath: source), accessMode: .read)
        let path = directory.path + "/\(name).storyboard"
        let output = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        for entry in input {
            var data = Data()
            _ = try input.extract(entry) { data.append($0) }
            let changed = change(entry.path, data)
            try output.addEntry(with: entry.path, type: .file, uncompressedSize: Int64(changed.count)) { (position: Int64, size: Int) in
                changed.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return path
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
