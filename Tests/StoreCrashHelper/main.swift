// Appends changes to a store as fast as it can and prints the sequence number
// of each one after its commit returned. The crash-safety test SIGKILLs this
// process at random moments and checks that every printed change survived.
//
// Usage: StoreCrashHelper DATABASE DOCUMENT-ID [BATCH]
// With BATCH > 1 each edit adds that many strokes in one change.
import Foundation
import StoryCore
import StoryIdentity
import StoryStore

let arguments = CommandLine.arguments
guard arguments.count >= 3, let document = DocumentID(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: StoreCrashHelper DATABASE DOCUMENT-ID [BATCH]\n".utf8))
    exit(2)
}
let strokesPerChange = arguments.count > 3 ? Int(arguments[3]) ?? 1 : 1

// The identity lives beside the database, so every run signs as the same daemon.
let store = try Store(path: arguments[1], identity: try Identity.loadOrCreate(in: arguments[1] + ".identity").signingIdentity)
let project = try await store.project(document)
guard let layer = project.view.shots.first?.layers.first?.id else {
    FileHandle.standardError.write(Data("the document has no layer\n".utf8))
    exit(2)
}
var index = 0
while true {
    index += 1
    let points = (0..<40).map { Point(x: Double($0) / 40, y: Double(index % 100) / 100, pressure: 0.5) }
    let result = try await store.editProject(document, at: Int64(index)) { editor in
        for _ in 0..<strokesPerChange { try editor.addStroke(to: layer, brush: Brush(), points: points) }
    }
    if let change = result.change {
        // Written (unbuffered) only after the commit returned: the change is durable now.
        FileHandle.standardOutput.write(Data("acked \(change.seq)\n".utf8))
    }
}
