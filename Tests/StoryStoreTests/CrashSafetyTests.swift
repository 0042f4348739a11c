import Foundation
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@testable import StoryStore

/// A helper process appends changes and prints each sequence number after its
/// commit returns; the test SIGKILLs it at random moments and checks that every
/// printed change survived, nothing is half-applied, and the database is healthy.
/// `STORYTELLER_CRASH_ROUNDS` sets the number of kills (CI runs 5; the long
/// mode 50 or more).
@Suite struct CrashSafetyTests {
    static var rounds: Int {
        getenv("STORYTELLER_CRASH_ROUNDS").flatMap { Int(String(cString: $0)) } ?? 5
    }

    @Test(arguments: [1, 20])
    func acknowledgedChangesSurviveSIGKILL(strokesPerChange: Int) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        let id: DocumentID
        do {
            let store = try Store(path: path, identity: try TestIdentities.signing(in: path + ".identity"))
            (id, _) = try await makeProject(in: store)
        }
        var random = SeededGenerator(seed: UInt64(strokesPerChange))
        var highestAcknowledged: UInt64 = 0
        var kills = 0
        for round in 0..<Self.rounds {
            let output = Pipe()
            let process = Process()
            process.executableURL = productsDirectory.appendingPathComponent("StoreCrashHelper")
            process.arguments = [path, id.description, String(strokesPerChange)]
            process.standardOutput = output
            try process.run()
            // Let it commit for a random while (it loads the document first).
            try await Task.sleep(for: .milliseconds(random.int(150...600)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the helper exited by itself")
            kills += 1
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let acknowledged = printed.split(separator: "\n").compactMap { line in
                line.hasPrefix("acked ") ? UInt64(line.dropFirst(6)) : nil
            }
            if let last = acknowledged.last { highestAcknowledged = max(highestAcknowledged, last) }

            let store = try Store(path: path, identity: try TestIdentities.signing(in: path + ".identity"))
            #expect(try await store.integrityProblems().isEmpty, "round \(round): integrity check failed")
            let doc = try await store.project(id)  // every stored change decodes and applies
            let replica = await store.replicaID
            #expect(doc.versionVector[replica] >= highestAcknowledged, "round \(round): an acknowledged change is missing")
            #expect(doc.pendingChangeCount == 0)
            let strokes = doc.view.counts.strokes
            if ProcessInfoShim.verbose {
                print("round \(round): acknowledged up to \(highestAcknowledged), stored \(doc.versionVector[replica]), strokes \(strokes)")
            }
            #expect(strokes == Int(doc.versionVector[replica] - 2) * strokesPerChange, "round \(round): a change is half there")
        }
        #expect(kills == Self.rounds)
        #expect(highestAcknowledged > 0, "the helper never committed a change")
    }
}
