package import StoryCore

/// What a daemon says about itself on the LAN (docs/protocol.md, "Local
/// discovery"): its peer id, the TCP port it takes peers on, and an instance
/// id chosen at each start. The address to dial is never in it: a receiver
/// takes it from the packet's source.
///
/// Version 1, big-endian, 47 bytes:
///
/// ```
/// magic:u32 (0x53544C44, "STLD")  version:u8 (1)  peer:32 bytes  port:u16  instance:u64
/// ```
///
/// Bytes after the instance id are ignored (a later revision of version 1
/// may add fields there); a packet longer than `maximumBytes` is refused
/// before it is read.
package struct DiscoveryAnnouncement: Hashable, Sendable {
    /// The announcing daemon's peer id (the SHA-256 of its certificate).
    package var peer: PeerID
    /// The TCP port it listens for peers on (1...65535).
    package var port: UInt16
    /// A random number the daemon picks at each start: a receiver tells its
    /// own announcements apart, and sees a restart as a new instance.
    package var instance: UInt64

    /// "STLD": Storyteller local discovery.
    package static let magic: UInt32 = 0x5354_4C44
    /// The version this daemon writes and reads.
    package static let version: UInt8 = 1
    /// The length of a version 1 announcement.
    package static let length = 4 + 1 + 32 + 2 + 8
    /// Larger datagrams are refused unread (a version 1 packet is 47 bytes).
    package static let maximumBytes = 512

    /// An announcement of `peer` listening on `port`, from its run `instance`.
    package init(peer: PeerID, port: UInt16, instance: UInt64) {
        self.peer = peer
        self.port = port
        self.instance = instance
    }

    /// The packet's bytes.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        append(Self.magic, to: &bytes)
        bytes.append(Self.version)
        bytes += peer.digest
        append(port, to: &bytes)
        append(instance, to: &bytes)
        return bytes
    }

    /// Reads a packet. O(n) in its length, which is checked first.
    /// - Throws: `DiscoveryPacketError` saying what is wrong (too large, too
    ///   short, not ours, another version, port 0).
    package init(decoding bytes: some Collection<UInt8>) throws(DiscoveryPacketError) {
        guard bytes.count <= Self.maximumBytes else {
            throw DiscoveryPacketError(.oversized, "\(bytes.count) bytes, more than the \(Self.maximumBytes) an announcement may have")
        }
        let bytes = Array(bytes)
        guard bytes.count >= 5 else {
            throw DiscoveryPacketError(.truncated, "\(bytes.count) bytes, too short for a magic and a version")
        }
        let magic = Self.read(UInt32.self, bytes, at: 0)
        guard magic == Self.magic else {
            throw DiscoveryPacketError(.notAnAnnouncement, "magic 0x\(String(magic, radix: 16)), not a Storyteller announcement")
        }
        guard bytes[4] == Self.version else {
            throw DiscoveryPacketError(.unsupportedVersion, "version \(bytes[4]); this daemon reads version \(Self.version)")
        }
        guard bytes.count >= Self.length else {
            throw DiscoveryPacketError(.truncated, "\(bytes.count) bytes, a version 1 announcement has \(Self.length)")
        }
        let port = Self.read(UInt16.self, bytes, at: 37)
        guard port != 0 else { throw DiscoveryPacketError(.invalidPort, "port 0") }
        // 32 bytes always make a peer id.
        self.peer = PeerID(digest: Array(bytes[5..<37]))!
        self.port = port
        self.instance = Self.read(UInt64.self, bytes, at: 39)
    }

    private func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func read<Integer: FixedWidthInteger>(_: Integer.Type, _ bytes: [UInt8], at offset: Int) -> Integer {
        bytes[offset..<(offset + MemoryLayout<Integer>.size)].reduce(0) { $0 << 8 | Integer($1) }
    }
}
