/// Settings of local discovery, with the daemon's defaults (docs/protocol.md,
/// "Local discovery"; Syncthing's local discovery uses the same timings).
package struct DiscoveryConfiguration: Sendable {
    /// The UDP port announcements are sent to and received on.
    package var port = DiscoveryConfiguration.defaultPort
    /// Time between announcements (one is also sent at start).
    package var interval: Duration = .seconds(30)
    /// A peer not heard for this long is forgotten (three intervals: two may be lost).
    package var lifetime: Duration = .seconds(90)
    /// At most this many peers are remembered (the least recently heard makes room).
    package var maximumPeers = 256
    /// At most this many addresses per peer.
    package var maximumAddressesPerPeer = 8
    /// Announcements answering a new peer are at least this far apart, so a
    /// flood of made-up peers cannot make this daemon flood the LAN.
    package var minimumGap: Duration = .seconds(1)

    /// UDP 21029 (Syncthing's local discovery uses 21027).
    package static let defaultPort = 21029
    /// The IPv6 group announcements are multicast to: link-local scope
    /// (`ff02`-style, `2`), transient (`1`), group id 0x7460 (the peer port).
    package static let multicastGroup = "ff12::7460"

    package init() {}
}
