import Foundation

/// One address of a network interface, as `getifaddrs` lists it.
struct InterfaceAddress: Hashable, Sendable {
    /// The interface's name (`eth0`) and index (`if_nametoindex`).
    var name: String
    var index: Int
    /// The address as text (`192.168.1.20`, `fe80::1`), and whether it is IPv6.
    var address: String
    var isIPv6: Bool
    /// The IPv4 broadcast address of its network, when it has one.
    var broadcast: String?
    var isUp: Bool
    var isLoopback: Bool
    var supportsMulticast: Bool

    /// This machine's interface addresses (IPv4 and IPv6), read afresh: Wi-Fi
    /// comes and goes, so the announcer reads them before each announcement.
    /// Nil if the system cannot list them (`getifaddrs` needs a netlink
    /// socket, which a sandbox such as systemd's `RestrictAddressFamilies`
    /// may forbid).
    static func current() -> [InterfaceAddress]? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        guard let first = list else { return [] }
        defer { freeifaddrs(list) }
        var result: [InterfaceAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let item = entry.pointee
            guard let socketAddress = item.ifa_addr else { continue }
            let family = Int32(socketAddress.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6, let text = Self.text(socketAddress) else { continue }
            let flags = item.ifa_flags
            let name = String(cString: item.ifa_name)
            var broadcast: String?
            if family == AF_INET {
                // `ifa_ifu` is the broadcast address when IFF_BROADCAST is set.
                if flags & UInt32(IFF_BROADCAST) != 0, let address = item.ifa_ifu.ifu_broadaddr {
                    broadcast = Self.text(address).flatMap { $0 == "0.0.0.0" ? nil : $0 }
                }
                if broadcast == nil, let netmask = item.ifa_netmask, let mask = Self.text(netmask),
                    flags & (UInt32(IFF_BROADCAST) | UInt32(IFF_LOOPBACK)) != 0
                {
                    broadcast = Self.directedBroadcast(of: text, mask: mask)
                }
            }
            result.append(
                InterfaceAddress(
                    name: name, index: Int(if_nametoindex(item.ifa_name)), address: text, isIPv6: family == AF_INET6,
                    broadcast: broadcast, isUp: flags & UInt32(IFF_UP) != 0,
                    isLoopback: flags & UInt32(IFF_LOOPBACK) != 0,
                    supportsMulticast: flags & UInt32(IFF_MULTICAST) != 0))
        }
        return result
    }

    /// The numeric text of an IPv4 or IPv6 socket address (no scope).
    private static func text(_ address: UnsafePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            guard inet_ntop(AF_INET, &value, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        case AF_INET6:
            var value = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            guard inet_ntop(AF_INET6, &value, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        default:
            return nil
        }
        return Self.string(buffer)
    }

    /// A NUL-terminated C string in a buffer.
    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address with every host bit set (`127.0.0.1`/`255.0.0.0` gives
    /// `127.255.255.255`); nil for a /31 or /32, which have no broadcast.
    static func directedBroadcast(of address: String, mask: String) -> String? {
        var host = in_addr()
        var netmask = in_addr()
        guard inet_pton(AF_INET, address, &host) == 1, inet_pton(AF_INET, mask, &netmask) == 1 else { return nil }
        let bits = UInt32(bigEndian: netmask.s_addr)
        guard bits.nonzeroBitCount <= 30 else { return nil }
        var broadcast = in_addr(s_addr: (UInt32(bigEndian: host.s_addr) | ~bits).bigEndian)
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &broadcast, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return Self.string(buffer)
    }
}

/// Where announcements go, given the address the daemon listens for peers on:
/// a daemon is announced only where it can be dialed.
///
/// - `0.0.0.0` (the default): IPv4 broadcast on every interface that is up
///   (the loopback's `127.255.255.255` too, so daemons on one machine find
///   each other).
/// - `::`: that, and IPv6 multicast on every interface that is up and does multicast.
/// - An address of this machine: only the interfaces that have it (a
///   loopback address: the loopback only), in its family.
/// - `localhost`: the loopback, IPv4. Another name: as `::`.
///
/// When the interfaces cannot be listed: `255.255.255.255` (the kernel sends
/// it on the interface of the default route), or `127.255.255.255` for a
/// loopback listener, and IPv6 multicast on the default interface.
struct AnnouncementTargets: Hashable, Sendable {
    /// IPv4 broadcast addresses, one per network.
    var broadcast: [String] = []
    /// Interfaces (name and index) to send the IPv6 multicast announcement on.
    var multicast: [Interface] = []
    /// Whether to listen for IPv4 and for IPv6 announcements.
    var ipv4: Bool
    var ipv6: Bool

    struct Interface: Hashable, Sendable {
        var name: String
        /// 0: the system's default interface for multicast.
        var index: Int
    }

    init(listenHost: String, interfaces: [InterfaceAddress]?) {
        let host = listenHost.hasPrefix("[") && listenHost.hasSuffix("]") ? String(listenHost.dropFirst().dropLast()) : listenHost
        guard let interfaces else {
            self = Self.fallback(for: host)
            return
        }
        var chosen: [InterfaceAddress]
        switch host {
        case "0.0.0.0", "", "*":
            (ipv4, ipv6) = (true, false)
            chosen = interfaces
        case "::":
            (ipv4, ipv6) = (true, true)
            chosen = interfaces
        case "localhost":
            (ipv4, ipv6) = (true, false)
            chosen = interfaces.filter(\.isLoopback)
        default:
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, host, &v4) == 1 {
                (ipv4, ipv6) = (true, false)
                let isLoopback = UInt32(bigEndian: v4.s_addr) >> 24 == 127
                let names = Set(interfaces.filter { isLoopback ? $0.isLoopback : $0.address == host }.map(\.name))
                chosen = interfaces.filter { names.contains($0.name) }
            } else if inet_pton(AF_INET6, host, &v6) == 1 {
                (ipv4, ipv6) = (false, true)
                let names = Set(interfaces.filter { $0.address == host }.map(\.name))
                chosen = interfaces.filter { names.contains($0.name) }
            } else {
                (ipv4, ipv6) = (true, true)
                chosen = interfaces
            }
        }
        chosen = chosen.filter(\.isUp)
        if ipv4 {
            for item in chosen where !item.isIPv6 {
                if let address = item.broadcast, !broadcast.contains(address) { broadcast.append(address) }
            }
        }
        if ipv6 {
            for item in chosen where item.isIPv6 && item.supportsMulticast && !item.isLoopback {
                let interface = Interface(name: item.name, index: item.index)
                if !multicast.contains(interface) { multicast.append(interface) }
            }
        }
    }

    private init(broadcast: [String], multicast: [Interface], ipv4: Bool, ipv6: Bool) {
        self.broadcast = broadcast
        self.multicast = multicast
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }

    /// The targets when the interfaces cannot be listed.
    private static func fallback(for host: String) -> AnnouncementTargets {
        var v4 = in_addr()
        var v6 = in6_addr()
        let isLoopback = host == "localhost" || (inet_pton(AF_INET, host, &v4) == 1 && UInt32(bigEndian: v4.s_addr) >> 24 == 127)
        let isIPv4 = isLoopback || ["0.0.0.0", "", "*"].contains(host) || inet_pton(AF_INET, host, &v4) == 1
        let isIPv6Only = !isIPv4 && host != "::" && inet_pton(AF_INET6, host, &v6) == 1
        return AnnouncementTargets(
            broadcast: isIPv6Only ? [] : [isLoopback ? "127.255.255.255" : "255.255.255.255"],
            multicast: isIPv4 ? [] : [Interface(name: "default", index: 0)], ipv4: !isIPv6Only, ipv6: !isIPv4)
    }
}
