import Foundation
package import Logging
package import NIOCore
import NIOPosix
package import StoryCore
package import StoryStore

/// What local discovery tells the peer manager.
package enum DiscoveryEvent: Sendable, Hashable {
    /// A peer was heard at an address it was not known at (it is new, it
    /// restarted, or it moved): worth dialing now if it is configured.
    case discovered(PeerID, address: String)
}

/// A peer local discovery has heard, as `LocalDiscovery.peers()` lists it.
package struct DiscoveredPeer: Sendable, Hashable {
    /// The peer id it announced.
    package var peer: PeerID
    /// `HOST:PORT`s it was heard from, most recent first.
    package var addresses: [String]
    /// When it was last heard (milliseconds since 1970).
    package var lastSeen: Int64
}

/// Whether local discovery runs, and what it has done.
package struct DiscoveryStatus: Sendable, Hashable {
    /// It listens and announces.
    package var isRunning: Bool
    /// Why it does not run (the discovery port could not be opened), or what
    /// part of it does not (no IPv6).
    package var problem: String?
    /// The UDP port it uses.
    package var port: Int
    package var statistics: DiscoveryStatistics
}

/// Local discovery, after Syncthing's: this daemon announces its peer id and
/// peer port on the LAN (UDP broadcast on IPv4, multicast to `ff12::7460` on
/// IPv6) at start, every `interval`, and soon after it hears a daemon that is
/// new to it; it listens for the others' announcements and keeps where each
/// was heard for `lifetime`. The address is the packet's source, never what
/// the packet says, and the TLS handshake still checks every peer id, so a
/// false announcement can only waste a dial.
///
/// `run` holds the sockets and returns when cancelled.
package actor LocalDiscovery {
    /// Its port, timings and bounds.
    package nonisolated let configuration: DiscoveryConfiguration
    /// The peer id it announces (this daemon's).
    package nonisolated let peerID: PeerID
    private var machine: DiscoveryStateMachine
    private let group: any EventLoopGroup
    private let clock: WallClock
    private let logger: Logger
    private let broadcaster = EventBroadcaster<DiscoveryEvent>()
    private var isRunning = false
    private var problem: String?
    /// Asks the announcer for an announcement now (buffers one).
    private var announceNow: AsyncStream<Void>.Continuation?

    /// - Parameter instance: this run's instance id (random unless a test sets it).
    package init(
        peerID: PeerID, configuration: DiscoveryConfiguration = DiscoveryConfiguration(), group: any EventLoopGroup,
        clock: WallClock = .system, logger: Logger, instance: UInt64 = .random(in: 1...UInt64.max)
    ) {
        self.peerID = peerID
        self.configuration = configuration
        self.group = group
        self.clock = clock
        self.logger = logger
        machine = DiscoveryStateMachine(
            peerID: peerID, instance: instance,
            cache: DiscoveryCache(
                lifetime: configuration.lifetime, maximumPeers: configuration.maximumPeers,
                maximumAddressesPerPeer: configuration.maximumAddressesPerPeer))
    }

    /// Peers heard from now on at a new address (the peer manager dials the configured ones).
    package nonisolated func events() -> AsyncStream<DiscoveryEvent> { broadcaster.subscribe() }

    /// Where `peer` was heard, most recent first (empty if it was not, or too long ago).
    package func addresses(of peer: PeerID) -> [String] { machine.cache.addresses(of: peer, now: .now) }

    /// A dial of `peer` at an address heard for it showed another
    /// certificate (or no TLS): that address is dropped and not taken from
    /// announcements again for a while (`DiscoveryCache.discredit`).
    package func discredit(_ peer: PeerID, at address: String) {
        machine.discredit(peer, at: address, now: .now)
        logger.notice(
            "an announcement of \(peer.short) from \(address) was false (another certificate answered there); ignoring it there for a while")
    }

    /// Every peer heard within the lifetime, by id.
    package func peers() -> [DiscoveredPeer] {
        machine.cache.peers(now: .now).map { DiscoveredPeer(peer: $0.peer, addresses: $0.addresses, lastSeen: $0.lastSeen) }
    }

    /// Whether it runs, and its counters.
    package func status() -> DiscoveryStatus {
        DiscoveryStatus(isRunning: isRunning, problem: problem, port: configuration.port, statistics: machine.statistics)
    }

    // MARK: - Running

    /// Listens on the discovery port and announces `port` (the peer
    /// listener's) where `listenHost` can be reached, until cancelled. A
    /// discovery port that cannot be opened is logged and said by `status()`;
    /// the daemon runs on without discovery.
    package func run(announcing port: Int, listenHost: String) async {
        guard let announcedPort = UInt16(exactly: port), announcedPort > 0 else {
            problem = "the peer port \(port) cannot be announced"
            return
        }
        let interfaces = InterfaceAddress.current()
        if interfaces == nil {
            let advice = "under systemd, RestrictAddressFamilies needs AF_NETLINK"
            logger.warning("local discovery cannot list the network interfaces: announcing on the default route's network only (\(advice))")
        }
        let targets = AnnouncementTargets(listenHost: listenHost, interfaces: interfaces)
        let (datagrams, sink) = AsyncStream.makeStream(of: ReceivedDatagram.self, bufferingPolicy: .bufferingNewest(256))
        var channels: [any Channel] = []
        var problems: [String] = []
        if targets.ipv4 {
            do {
                channels.append(try await bind(host: "0.0.0.0", sink: sink))
            } catch {
                problems.append("cannot listen on UDP \(configuration.port) (IPv4): \(Self.words(error))")
            }
        }
        if targets.ipv6 {
            do {
                let channel = try await bind(host: "::", sink: sink)
                channels.append(channel)
                await join(channel, on: targets.multicast)
            } catch {
                problems.append("cannot listen on UDP \(configuration.port) (IPv6): \(Self.words(error))")
            }
        }
        problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
        guard !channels.isEmpty else {
            logger.warning("local discovery is off: \(problem ?? "nothing to listen on")")
            return
        }
        if let problem { logger.warning("local discovery: \(problem)") }
        isRunning = true
        let how = [targets.ipv4 ? "IPv4 broadcast" : nil, targets.ipv6 ? "IPv6 multicast to \(DiscoveryConfiguration.multicastGroup)" : nil]
            .compactMap { $0 }.joined(separator: " and ")
        logger.info(
            "local discovery on UDP \(configuration.port): announcing \(peerID.short) with port \(port) every \(configuration.interval.components.seconds) s (\(how))"
        )
        let (requests, announceNow) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.announceNow = announceNow
        let configuration = self.configuration
        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                for await datagram in datagrams { await self.handle(datagram) }
            }
            tasks.addTask {
                // At start, then every interval.
                while !Task.isCancelled {
                    announceNow.yield()
                    try? await Task.sleep(for: configuration.interval)
                }
            }
            tasks.addTask {
                // Requests within the gap after an announcement fold into one.
                for await _ in requests {
                    await self.announce(announcedPort, listenHost: listenHost)
                    try? await Task.sleep(for: configuration.minimumGap)
                }
            }
        }
        isRunning = false
        self.announceNow = nil
        sink.finish()
        for channel in channels { try? await channel.close() }
    }

    private func handle(_ datagram: ReceivedDatagram) {
        switch machine.received(datagram.bytes, from: datagram.host, now: .now, milliseconds: clock.milliseconds) {
        case .none:
            break
        case .refuse(let error, let from):
            logger.debug("ignored a packet from \(from) on the discovery port: \(error)")
        case .warnSameIdentity(let address):
            logger.warning(
                "\(address) announces this daemon's own peer id: another daemon runs with a copy of this identity (a copied data directory?)")
        case .discovered(let peer, let address, let answer):
            logger.debug("discovered \(peer.short) at \(address)")
            broadcaster.publish(.discovered(peer, address: address))
            // A daemon that is new here may not know this one yet: tell it now.
            if answer { announceNow?.yield() }
        }
    }

    /// Sends one announcement to every target, each from a socket of its own:
    /// NIO closes a datagram channel on a write error such as "network
    /// unreachable", which an interface going down gives, and that must not
    /// cost the next destination (or the receiving sockets).
    private func announce(_ port: UInt16, listenHost: String) async {
        machine.expire(now: .now)
        let targets = AnnouncementTargets(listenHost: listenHost, interfaces: InterfaceAddress.current())
        var destinations: [(SocketAddress, bindHost: String)] = []
        for address in targets.broadcast {
            if let destination = try? SocketAddress(ipAddress: address, port: configuration.port) { destinations.append((destination, "0.0.0.0")) }
        }
        for interface in targets.multicast {
            destinations.append((Self.multicast(port: configuration.port, interface: interface.index), "::"))
        }
        let bytes = machine.announcement(port: port).encoded()
        var failed = 0
        for (destination, bindHost) in destinations {
            do {
                let channel = try await DatagramBootstrap(group: group)
                    .channelOption(.socketOption(.so_broadcast), value: 1)
                    .bind(host: bindHost, port: 0).get()
                defer { channel.close(promise: nil) }
                try await channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: ByteBuffer(bytes: bytes))).get()
            } catch {
                failed += 1
                logger.debug("cannot announce to \(destination): \(error)")
            }
        }
        machine.announced(sent: destinations.count, failed: failed)
        if destinations.isEmpty { logger.debug("no interface to announce on") }
    }

    private func bind(host: String, sink: AsyncStream<ReceivedDatagram>.Continuation) async throws -> any Channel {
        let logger = self.logger
        var bootstrap = DatagramBootstrap(group: group)
            // Several daemons on one machine each get every announcement.
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            // A datagram larger than this arrives cut to it, still larger than an announcement may be.
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 1024))
        if host == "::" {
            // IPv4 arrives on the IPv4 socket only.
            bootstrap = bootstrap.channelOption(ChannelOptions.Types.SocketOption(level: .ipv6, name: .ipv6_v6only), value: 1)
        }
        return
            try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DiscoveryDatagramHandler(sink: sink, logger: logger))
                }
            }
            .bind(host: host, port: configuration.port).get()
    }

    /// Joins the IPv6 group on each interface (failures are logged: one
    /// interface without IPv6 does not stop the others).
    private func join(_ channel: any Channel, on interfaces: [AnnouncementTargets.Interface]) async {
        guard let multicast = channel as? any MulticastChannel,
            let group = try? SocketAddress(ipAddress: DiscoveryConfiguration.multicastGroup, port: 0)
        else { return }
        let devices = (try? System.enumerateDevices()) ?? []
        for interface in interfaces {
            // Index 0: the interfaces could not be listed; the system's default one.
            let device = devices.first { $0.interfaceIndex == interface.index && $0.address?.protocol == .inet6 }
            guard device != nil || interface.index == 0 else { continue }
            do {
                try await multicast.joinGroup(group, device: device).get()
            } catch {
                logger.debug("cannot join \(DiscoveryConfiguration.multicastGroup) on \(interface.name): \(error)")
            }
        }
    }

    /// The IPv6 group on one interface (a link-local group needs it).
    private static func multicast(port: Int, interface: Int) -> SocketAddress {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(port).bigEndian
        _ = inet_pton(AF_INET6, DiscoveryConfiguration.multicastGroup, &address.sin6_addr)
        address.sin6_scope_id = UInt32(interface)
        return SocketAddress(address, host: DiscoveryConfiguration.multicastGroup)
    }

    /// A socket error in words (EADDRINUSE cannot happen: the port is shared).
    private static func words(_ error: any Error) -> String {
        switch (error as? IOError)?.errnoCode {
        case EACCES?: "this user may not use that port (use one above 1023)"
        case EAFNOSUPPORT?: "this machine has no such network stack"
        case let code?: String(cString: strerror(code))
        case nil: "\(error)"
        }
    }
}
