import StoryCore
import StoryTestSupport
import Testing

@testable import StorySync

/// The discovery packet, the cache and the state machine, without sockets.
@Suite struct DiscoveryPacketTests {
    static let peer = PeerID(digest: (0..<32).map { UInt8($0) })!
    static let other = PeerID(digest: (0..<32).map { UInt8(255 - $0) })!

    @Test func anAnnouncementRoundTripsThroughItsFortySevenBytes() throws {
        let announcement = DiscoveryAnnouncement(peer: Self.peer, port: 7460, instance: 0x0102_0304_0506_0708)
        let bytes = announcement.encoded()
        #expect(bytes.count == 47)
        #expect(Array(bytes.prefix(5)) == [0x53, 0x54, 0x4C, 0x44, 1], "magic STLD, version 1")
        #expect(Array(bytes[5..<37]) == Self.peer.digest)
        #expect(Array(bytes[37..<39]) == [0x1D, 0x24], "the port, big-endian")
        #expect(Array(bytes[39...]) == [1, 2, 3, 4, 5, 6, 7, 8], "the instance, big-endian")
        #expect(try DiscoveryAnnouncement(decoding: bytes) == announcement)
    }

    @Test func bytesAfterTheInstanceAreIgnoredSoALaterRevisionCanAddFields() throws {
        let announcement = DiscoveryAnnouncement(peer: Self.peer, port: 1, instance: 9)
        #expect(try DiscoveryAnnouncement(decoding: announcement.encoded() + Array(repeating: 7, count: 100)) == announcement)
    }

    static let malformed: [(String, [UInt8], DiscoveryPacketError.Code)] = {
        let good = DiscoveryAnnouncement(peer: peer, port: 7460, instance: 1).encoded()
        var otherVersion = good
        otherVersion[4] = 2
        var portZero = good
        portZero[37] = 0
        portZero[38] = 0
        return [
            ("empty", [], .truncated),
            ("four bytes", [0x53, 0x54, 0x4C, 0x44], .truncated),
            ("Syncthing's magic", [0x2E, 0xA7, 0xD9, 0x0B] + good.dropFirst(4), .notAnAnnouncement),
            ("text", Array("hello, is anyone there?".utf8), .notAnAnnouncement),
            ("version 2", otherVersion, .unsupportedVersion),
            ("cut in the peer id", Array(good.prefix(20)), .truncated),
            ("cut in the instance", Array(good.dropLast()), .truncated),
            ("port 0", portZero, .invalidPort),
        ]
    }()

    @Test(arguments: malformed)
    func malformedPacketsAreRefusedWithWhatIsWrong(_ name: String, _ bytes: [UInt8], _ code: DiscoveryPacketError.Code) {
        #expect(throws: DiscoveryPacketError.self, "\(name)") { try DiscoveryAnnouncement(decoding: bytes) }
        do {
            _ = try DiscoveryAnnouncement(decoding: bytes)
        } catch {
            #expect(error.code == code, "\(name): \(error)")
        }
    }

    @Test func anOversizedPacketIsRefusedBeforeItIsRead() {
        let good = DiscoveryAnnouncement(peer: Self.peer, port: 7460, instance: 1).encoded()
        #expect(throws: Never.self) { try DiscoveryAnnouncement(decoding: good + Array(repeating: 0, count: 512 - 47)) }
        do {
            _ = try DiscoveryAnnouncement(decoding: good + Array(repeating: 0, count: 512 - 46))
            Issue.record("513 bytes were taken")
        } catch {
            #expect(error.code == .oversized)
        }
        do {
            _ = try DiscoveryAnnouncement(decoding: [UInt8](repeating: 0xFF, count: 65_000))
            Issue.record("65,000 bytes were taken")
        } catch {
            #expect(error.code == .oversized)
        }
    }

    /// Any bytes at all: a refusal or an announcement, never a crash.
    @Test func randomBytesNeverCrashTheDecoder() {
        var generator = SeededGenerator(seed: 13)
        let good = DiscoveryAnnouncement(peer: Self.peer, port: 7460, instance: 1).encoded()
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = good
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            }
            _ = try? DiscoveryAnnouncement(decoding: bytes)
        }
    }
}

@Suite struct DiscoveryCacheTests {
    let start = ContinuousClock.now

    @Test func aPeerIsForgottenNinetySecondsAfterItWasLastHeard() {
        var cache = DiscoveryCache()
        let peer = DiscoveryPacketTests.peer
        #expect(cache.record(peer, instance: 1, at: "192.168.1.20:7460", now: start, milliseconds: 1_000) == .newPeer)
        #expect(cache.addresses(of: peer, now: start + .seconds(89)) == ["192.168.1.20:7460"])
        #expect(cache.record(peer, instance: 1, at: "192.168.1.20:7460", now: start + .seconds(30), milliseconds: 31_000) == .refreshed)
        #expect(cache.addresses(of: peer, now: start + .seconds(119)) == ["192.168.1.20:7460"], "each announcement restarts the 90 s")
        #expect(cache.addresses(of: peer, now: start + .seconds(121)).isEmpty)
        #expect(cache.peers(now: start + .seconds(121)).isEmpty)
        #expect(cache.count == 1, "held until expire")
        cache.expire(now: start + .seconds(121))
        #expect(cache.count == 0)
        #expect(cache.record(peer, instance: 1, at: "192.168.1.20:7460", now: start + .seconds(200), milliseconds: 0) == .newPeer)
    }

    /// An address whose dial showed another certificate is dropped and not
    /// taken from announcements again, even a new instance's, for the
    /// lifetime; the peer's other addresses stay; then it may be heard anew.
    @Test func aDiscreditedAddressIsNotTakenAgainForItsLifetime() {
        var cache = DiscoveryCache()
        let peer = DiscoveryPacketTests.peer
        _ = cache.record(peer, instance: 1, at: "10.0.0.5:7460", now: start, milliseconds: 0)
        _ = cache.record(peer, instance: 1, at: "10.0.0.66:7460", now: start, milliseconds: 0)
        cache.discredit(peer, at: "10.0.0.66:7460", now: start + .seconds(1))
        #expect(cache.addresses(of: peer, now: start + .seconds(1)) == ["10.0.0.5:7460"])
        #expect(cache.record(peer, instance: 1, at: "10.0.0.66:7460", now: start + .seconds(2), milliseconds: 2_000) == .refreshed)
        #expect(cache.record(peer, instance: 2, at: "10.0.0.66:7460", now: start + .seconds(3), milliseconds: 3_000) == .refreshed)
        #expect(cache.addresses(of: peer, now: start + .seconds(3)) == ["10.0.0.5:7460"], "nothing taken from there")
        cache.expire(now: start + .seconds(92))
        #expect(cache.record(peer, instance: 2, at: "10.0.0.66:7460", now: start + .seconds(92), milliseconds: 92_000) == .newPeer)
    }

    @Test func eachAddressExpiresOnItsOwnAndTheMostRecentComesFirst() {
        var cache = DiscoveryCache()
        let peer = DiscoveryPacketTests.peer
        _ = cache.record(peer, instance: 1, at: "10.0.0.5:7460", now: start, milliseconds: 0)
        #expect(cache.record(peer, instance: 1, at: "192.168.1.20:7460", now: start + .seconds(60), milliseconds: 60_000) == .newAddress)
        #expect(cache.addresses(of: peer, now: start + .seconds(60)) == ["192.168.1.20:7460", "10.0.0.5:7460"])
        #expect(cache.addresses(of: peer, now: start + .seconds(100)) == ["192.168.1.20:7460"], "the laptop left the wired network")
        #expect(cache.peers(now: start + .seconds(100)).first?.lastSeen == 60_000)
    }

    @Test func aRestartedPeerKeepsOnlyTheAddressOfItsNewInstance() {
        var cache = DiscoveryCache()
        let peer = DiscoveryPacketTests.peer
        _ = cache.record(peer, instance: 1, at: "10.0.0.5:7460", now: start, milliseconds: 0)
        #expect(cache.record(peer, instance: 2, at: "10.0.0.5:40123", now: start + .seconds(5), milliseconds: 0) == .newInstance)
        #expect(cache.addresses(of: peer, now: start + .seconds(5)) == ["10.0.0.5:40123"], "not the port it had before")
    }

    @Test func theCacheHoldsAtMostItsBoundAndTheLeastRecentlyHeardMakesRoom() {
        var cache = DiscoveryCache(maximumPeers: 4, maximumAddressesPerPeer: 2)
        let peers = (0..<6).map { index in PeerID(digest: [UInt8(index)] + Array(repeating: 0, count: 31))! }
        for (index, peer) in peers.enumerated() {
            _ = cache.record(peer, instance: 1, at: "10.0.0.\(index):7460", now: start + .seconds(index), milliseconds: 0)
            #expect(cache.count <= 4)
        }
        #expect(Set(cache.peers(now: start + .seconds(6)).map(\.peer)) == Set(peers.suffix(4)))
        // Heard again, the oldest survives the next newcomer.
        _ = cache.record(peers[2], instance: 1, at: "10.0.0.2:7460", now: start + .seconds(10), milliseconds: 0)
        _ = cache.record(peers[0], instance: 1, at: "10.0.0.0:7460", now: start + .seconds(11), milliseconds: 0)
        #expect(Set(cache.peers(now: start + .seconds(11)).map(\.peer)) == [peers[0], peers[2], peers[4], peers[5]])
        for port in 1...5 {
            _ = cache.record(peers[0], instance: 1, at: "10.0.0.0:\(port)", now: start + .seconds(11 + port), milliseconds: 0)
        }
        #expect(cache.addresses(of: peers[0], now: start + .seconds(17)) == ["10.0.0.0:5", "10.0.0.0:4"], "two addresses per peer, the latest")
    }
}

@Suite struct DiscoveryStateMachineTests {
    let now = ContinuousClock.now

    private func machine() -> DiscoveryStateMachine {
        DiscoveryStateMachine(peerID: DiscoveryPacketTests.peer, instance: 42, cache: DiscoveryCache())
    }

    @Test func theAddressIsThePacketsSourceWithTheAnnouncedPort() {
        var machine = machine()
        let packet = DiscoveryAnnouncement(peer: DiscoveryPacketTests.other, port: 7461, instance: 7).encoded()
        #expect(
            machine.received(packet, from: "192.168.1.31", now: now, milliseconds: 0)
                == .discovered(DiscoveryPacketTests.other, address: "192.168.1.31:7461", answer: true))
        #expect(
            machine.received(packet, from: "fe80::1%eth0", now: now, milliseconds: 0)
                == .discovered(DiscoveryPacketTests.other, address: "[fe80::1%eth0]:7461", answer: false), "a second address: no need to answer")
        #expect(machine.received(packet, from: "192.168.1.31", now: now + .seconds(30), milliseconds: 0) == .none, "heard again")
        #expect(machine.cache.addresses(of: DiscoveryPacketTests.other, now: now + .seconds(30)) == ["192.168.1.31:7461", "[fe80::1%eth0]:7461"])
        #expect(machine.statistics.announcementsAccepted == 3)
    }

    @Test func itsOwnAnnouncementsAreIgnoredAndACopyOfItsIdentityIsWarnedAboutOnce() {
        var machine = machine()
        let own = machine.announcement(port: 7460).encoded()
        #expect(machine.received(own, from: "127.0.0.1", now: now, milliseconds: 0) == .none)
        let copy = DiscoveryAnnouncement(peer: DiscoveryPacketTests.peer, port: 7460, instance: 43).encoded()
        #expect(machine.received(copy, from: "192.168.1.40", now: now, milliseconds: 0) == .warnSameIdentity(address: "192.168.1.40:7460"))
        #expect(machine.received(copy, from: "192.168.1.40", now: now, milliseconds: 0) == .none)
        #expect(machine.cache.count == 0)
    }

    @Test func aRestartIsAnsweredAndBadPacketsAreCountedApart() {
        var machine = machine()
        let first = DiscoveryAnnouncement(peer: DiscoveryPacketTests.other, port: 7460, instance: 1).encoded()
        let restarted = DiscoveryAnnouncement(peer: DiscoveryPacketTests.other, port: 7460, instance: 2).encoded()
        _ = machine.received(first, from: "10.0.0.2", now: now, milliseconds: 0)
        #expect(
            machine.received(restarted, from: "10.0.0.2", now: now, milliseconds: 0)
                == .discovered(DiscoveryPacketTests.other, address: "10.0.0.2:7460", answer: true))
        guard case .refuse(let error, "10.0.0.9") = machine.received([1, 2, 3], from: "10.0.0.9", now: now, milliseconds: 0) else {
            Issue.record("three bytes were not refused")
            return
        }
        #expect(error.code == .truncated)
        _ = machine.received([UInt8](repeating: 0, count: 1024), from: "10.0.0.9", now: now, milliseconds: 0)
        #expect(machine.statistics.packetsReceived == 4)
        #expect(machine.statistics.packetsMalformed == 1 && machine.statistics.packetsOversized == 1)
    }
}

@Suite struct AnnouncementTargetTests {
    static let interfaces = [
        InterfaceAddress(
            name: "lo", index: 1, address: "127.0.0.1", isIPv6: false, broadcast: "127.255.255.255", isUp: true, isLoopback: true,
            supportsMulticast: false),
        InterfaceAddress(
            name: "lo", index: 1, address: "::1", isIPv6: true, broadcast: nil, isUp: true, isLoopback: true, supportsMulticast: false),
        InterfaceAddress(
            name: "eth0", index: 2, address: "192.168.1.20", isIPv6: false, broadcast: "192.168.1.255", isUp: true, isLoopback: false,
            supportsMulticast: true),
        InterfaceAddress(
            name: "eth0", index: 2, address: "fe80::1", isIPv6: true, broadcast: nil, isUp: true, isLoopback: false, supportsMulticast: true),
        InterfaceAddress(
            name: "wlan0", index: 3, address: "10.0.0.7", isIPv6: false, broadcast: "10.0.0.255", isUp: false, isLoopback: false,
            supportsMulticast: true),
    ]

    @Test func aDaemonIsAnnouncedOnlyWhereItCanBeDialed() {
        let all = AnnouncementTargets(listenHost: "0.0.0.0", interfaces: Self.interfaces)
        #expect(all.broadcast == ["127.255.255.255", "192.168.1.255"] && all.multicast.isEmpty, "up interfaces, IPv4 only")
        let both = AnnouncementTargets(listenHost: "::", interfaces: Self.interfaces)
        #expect(both.broadcast == ["127.255.255.255", "192.168.1.255"] && both.multicast == [.init(name: "eth0", index: 2)])
        let loopback = AnnouncementTargets(listenHost: "127.0.0.1", interfaces: Self.interfaces)
        #expect(loopback.broadcast == ["127.255.255.255"] && loopback.multicast.isEmpty && loopback.ipv4 && !loopback.ipv6)
        let one = AnnouncementTargets(listenHost: "192.168.1.20", interfaces: Self.interfaces)
        #expect(one.broadcast == ["192.168.1.255"])
        let v6 = AnnouncementTargets(listenHost: "[fe80::1]", interfaces: Self.interfaces)
        #expect(v6.broadcast.isEmpty && v6.multicast == [.init(name: "eth0", index: 2)] && !v6.ipv4)
        let elsewhere = AnnouncementTargets(listenHost: "192.168.9.9", interfaces: Self.interfaces)
        #expect(elsewhere.broadcast.isEmpty)
    }

    @Test func withoutTheListOfInterfacesTheDefaultNetworkIsStillAnnouncedOn() {
        let all = AnnouncementTargets(listenHost: "0.0.0.0", interfaces: nil)
        #expect(all.broadcast == ["255.255.255.255"] && all.multicast.isEmpty && all.ipv4 && !all.ipv6)
        let loopback = AnnouncementTargets(listenHost: "127.0.0.1", interfaces: nil)
        #expect(loopback.broadcast == ["127.255.255.255"])
        let both = AnnouncementTargets(listenHost: "[::]", interfaces: nil)
        #expect(both.broadcast == ["255.255.255.255"] && both.multicast.map(\.index) == [0])
        let v6 = AnnouncementTargets(listenHost: "fd00::2", interfaces: nil)
        #expect(v6.broadcast.isEmpty && !v6.ipv4 && v6.ipv6)
    }

    @Test func theDirectedBroadcastSetsEveryHostBit() {
        #expect(InterfaceAddress.directedBroadcast(of: "127.0.0.1", mask: "255.0.0.0") == "127.255.255.255")
        #expect(InterfaceAddress.directedBroadcast(of: "10.77.0.1", mask: "255.255.255.0") == "10.77.0.255")
        #expect(InterfaceAddress.directedBroadcast(of: "172.16.5.4", mask: "255.255.240.0") == "172.16.15.255")
        #expect(InterfaceAddress.directedBroadcast(of: "10.0.0.1", mask: "255.255.255.254") == nil, "a /31 has no broadcast")
    }

    @Test func thisMachinesLoopbackIsListedWithItsBroadcastAddress() {
        let loopback = (InterfaceAddress.current() ?? []).filter { $0.isLoopback && !$0.isIPv6 }
        #expect(loopback.contains { $0.address == "127.0.0.1" && $0.broadcast == "127.255.255.255" && $0.isUp })
    }
}
