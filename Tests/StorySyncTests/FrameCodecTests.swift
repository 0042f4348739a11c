import NIOCore
import NIOEmbedded
import StoryCore
import StoryIdentity
import StoryTestSupport
import Testing

@testable import StorySync

@Suite struct FrameCodecTests {
    static let samples: [Message] = [
        .hello(version: 1, name: "Director's laptop", capabilities: ["x"]),
        .advertise(
            .init(
                document: DocumentID(high: 1, low: 2), kind: 1, name: "Night Train", role: .editor,
                version: VersionVector([ReplicaID(3): 4, ReplicaID(9): 1]))),
        .changes(document: DocumentID(high: 1, low: 2), batch: [0]),
        .snapshot(document: DocumentID(high: 1, low: 2), kind: 2, bytes: [1, 2, 3]),
        .snapshotPart(document: DocumentID(high: 1, low: 2), kind: 1, total: 10, offset: 7, bytes: [7, 8, 9]),
        .ack(document: DocumentID(high: 1, low: 2), version: VersionVector([ReplicaID(3): 4])),
        .ping(7), .pong(7), .error(code: 3, message: "read-only"), .goodbye(reason: "bye"),
    ]

    func decoder(maximum: Int = 1 << 20) -> EmbeddedChannel {
        EmbeddedChannel(handler: ByteToMessageHandler(MessageDecoder(maximumFrameBytes: maximum)))
    }

    @Test func everyMessageRoundTripsEvenWhenSplitAcrossReads() throws {
        let channel = decoder()
        let bytes = Self.samples.flatMap { $0.framed() }
        var random = SeededGenerator(seed: 1)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + random.int(1...9))
            try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
        }
        var decoded: [Message] = []
        while let message = try channel.readInbound(as: Message.self) { decoded.append(message) }
        #expect(decoded == Self.samples)
        _ = try channel.finish()
    }

    @Test func anOversizedFrameIsAnErrorBeforeItIsBuffered() throws {
        let channel = decoder(maximum: 1024)
        var header = ByteBuffer()
        header.writeInteger(UInt32(1 << 30))
        header.writeInteger(UInt8(3))
        #expect(throws: SyncError.self) { try channel.writeInbound(header) }
    }

    @Test func unknownTypesTruncatedPayloadsAndTrailingGarbageAreErrors() throws {
        for bytes: [UInt8] in [
            [0, 0, 0, 1, 99],  // unknown type
            [0, 0, 0, 0],  // no type byte
            [0, 0, 0, 3, 1, 1, 200],  // hello with a truncated name
            Message.ping(1).framed().dropLast() + [0x80] + [0x80],  // a ping whose varint never ends… inside its frame
            Array(Message.goodbye(reason: "x").framed().prefix(4)) + [9] + [1, 0x78, 0xFF],  // garbage after the string
        ] {
            let channel = decoder()
            var caught = false
            do {
                try channel.writeInbound(ByteBuffer(bytes: bytes))
                _ = try channel.readInbound(as: Message.self)
            } catch is SyncError {
                caught = true
            }
            // Some of these are only complete frames once their length is met; either
            // they are refused or nothing is decoded yet, never a wrong message.
            if !caught { #expect(try channel.readInbound(as: Message.self) == nil) }
            _ = try? channel.finish()
        }
    }

    /// A snapshot part must lie inside its snapshot and carry bytes.
    @Test func snapshotPartsOutsideTheirSnapshotAreRefused() throws {
        let document = DocumentID(high: 1, low: 2)
        for message: Message in [
            .snapshotPart(document: document, kind: 1, total: 10, offset: 8, bytes: [1, 2, 3]),  // past the end
            .snapshotPart(document: document, kind: 1, total: 10, offset: 10, bytes: [1]),  // starts at the end
            .snapshotPart(document: document, kind: 1, total: 10, offset: 0, bytes: []),  // empty
            .snapshotPart(document: document, kind: 1, total: 0, offset: 0, bytes: [1]),  // an empty snapshot
        ] {
            let channel = decoder()
            #expect(throws: SyncError.self, "\(message.summary)") {
                try channel.writeInbound(ByteBuffer(bytes: message.framed()))
            }
            _ = try? channel.finish()
        }
    }

    /// Names and lists a peer sends are bounded as the control API bounds them.
    @Test func overlongNamesAndCapabilitiesAreRefused() throws {
        let long = String(repeating: "n", count: Message.maximumNameBytes + 1)
        let fine = String(repeating: "n", count: Message.maximumNameBytes)
        for (message, accepted) in [
            (Message.hello(version: 2, name: fine, capabilities: ["a"]), true),
            (Message.hello(version: 2, name: long, capabilities: []), false),
            (Message.hello(version: 2, name: "x", capabilities: Array(repeating: "c", count: 65)), false),
            (Message.hello(version: 2, name: "x", capabilities: [String(repeating: "c", count: 65)]), false),
            (Message.advertise(.init(document: DocumentID(high: 1, low: 2), kind: 1, name: long, role: .editor, version: VersionVector())), false),
            // Names that would print a fake log line or retitle a terminal.
            (Message.hello(version: 2, name: "laptop\n2026-11-28 info storytellerd: all good", capabilities: []), false),
            (Message.hello(version: 2, name: "\u{1B}]0;pwned\u{7}", capabilities: []), false),
            (Message.hello(version: 2, name: "file\u{202E}gpj.exe", capabilities: []), false),
            (
                Message.advertise(
                    .init(document: DocumentID(high: 1, low: 2), kind: 1, name: "Night\rTrain", role: .editor, version: VersionVector())), false
            ),
            (Message.hello(version: 2, name: "Studio Mac · 2", capabilities: []), true),
        ] {
            let channel = decoder()
            defer { _ = try? channel.finish() }
            if accepted {
                try channel.writeInbound(ByteBuffer(bytes: message.framed()))
                #expect(try channel.readInbound(as: Message.self) == message)
            } else {
                #expect(throws: SyncError.self) { try channel.writeInbound(ByteBuffer(bytes: message.framed())) }
            }
        }
    }

    /// A peer's reasons and messages are informational: kept, with control
    /// characters escaped and at most 1,000 characters, wherever they are shown.
    @Test func reasonsAndMessagesFromAPeerArriveEscapedAndBounded() throws {
        let channel = decoder()
        defer { _ = try? channel.finish() }
        try channel.writeInbound(ByteBuffer(bytes: Message.goodbye(reason: "bye\n\u{1B}[2J").framed()))
        #expect(try channel.readInbound(as: Message.self) == .goodbye(reason: "bye\\n\\u{1B}[2J"))
        try channel.writeInbound(ByteBuffer(bytes: Message.error(code: 2, message: String(repeating: "x", count: 5_000)).framed()))
        guard case .error(_, let message)? = try channel.readInbound(as: Message.self) else {
            Issue.record("no error message")
            return
        }
        #expect(message.count == 1_001 && message.hasSuffix("…"))
    }

    @Test func fuzzedFramesNeverCrashTheDecoder() throws {
        var random = SeededGenerator(seed: 2)
        let valid = Self.samples.flatMap { $0.framed() }
        var errors = 0
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<random.int(1...4) { bytes[random.int(0...(bytes.count - 1))] ^= UInt8.random(in: 1...255, using: &random) }
            let channel = decoder(maximum: 4096)
            do {
                try channel.writeInbound(ByteBuffer(bytes: bytes))
                while try channel.readInbound(as: Message.self) != nil {}
            } catch is SyncError {
                errors += 1
            }
            _ = try? channel.finish()
        }
        #expect(errors > 100)
    }
}
