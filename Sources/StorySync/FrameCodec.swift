package import NIOCore

/// Splits the byte stream into frames (4-byte big-endian length of type +
/// payload, 1-byte type, payload) and decodes their messages. A frame over
/// `maximumFrameBytes` is an error before any of it is buffered.
package struct MessageDecoder: ByteToMessageDecoder {
    package typealias InboundOut = Message

    package let maximumFrameBytes: Int

    package init(maximumFrameBytes: Int = 16 << 20) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard length >= 1 else { throw SyncError(.malformed, "a frame must hold a type byte") }
        guard Int(length) <= maximumFrameBytes else {
            throw SyncError(.frameTooLarge, "a frame of \(length) bytes exceeds the limit of \(maximumFrameBytes)")
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        let type: UInt8 = buffer.readInteger()!
        let payload = buffer.readBytes(length: Int(length) - 1)!
        context.fireChannelRead(wrapInboundOut(try Message(type: type, payload: payload[...])))
        return .continue
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// Writes messages as frames.
package struct MessageEncoder: MessageToByteEncoder {
    package typealias OutboundIn = Message

    package init() {}

    package func encode(data: Message, out: inout ByteBuffer) throws {
        let payload = data.payload()
        out.reserveCapacity(minimumWritableBytes: 5 + payload.count)
        out.writeInteger(UInt32(payload.count + 1))
        out.writeInteger(data.kind.rawValue)
        out.writeBytes(payload)
    }
}

extension Message {
    /// The message as a complete frame (for tests and tools).
    package func framed() -> [UInt8] {
        var buffer = ByteBuffer()
        try? MessageEncoder().encode(data: self, out: &buffer)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }
}

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension MessageDecoder: Sendable {}

/// A channel handler belongs to its channel's event loop: never shared across threads.
@available(*, unavailable)
extension MessageEncoder: Sendable {}
