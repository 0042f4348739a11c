import Foundation

/// A TCP address to listen on.
/// `HOST:PORT`, with `[v6]:PORT` for IPv6 literals.
package struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    package struct Invalid: Error {}

    package let host: String
    package let port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    package init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
        else { throw Invalid() }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Invalid() }
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether the host is this machine's loopback: `localhost`, an IPv4
    /// address in 127.0.0.0/8 or `::1` (names other than `localhost` are not
    /// resolved: what they resolve to can change).
    package var isLoopback: Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }
}
