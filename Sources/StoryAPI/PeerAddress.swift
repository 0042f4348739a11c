import Foundation

extension API {
    /// An address to dial a peer at: `HOST:PORT`, where the host is a name
    /// (`studio-mac.local`, resolved each time it is dialed), an IPv4
    /// address, or an IPv6 address in brackets (`[fe80::1%eth0]:7460`).
    /// The CLI and the daemon check addresses with this one type, so both
    /// refuse the same ones in the same words.
    package struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
        /// A name, an IPv4 address, or an IPv6 address without brackets (with its `%zone`, if any).
        package let host: String
        /// 1...65535.
        package let port: Int

        /// At most this many addresses per peer (each may cost a connect timeout per attempt).
        package static let maximumPerPeer = 16

        /// Checks one address.
        /// - Throws: `APIError(.badRequest)` saying what is wrong and how to write it.
        package init(_ text: String) throws(APIError) {
            func refuse(_ problem: String) -> APIError { APIError(.badRequest, problem) }
            let example = "e.g. studio-mac.local:7460 or 192.168.1.20:7460"
            guard !text.isEmpty else { throw refuse("an address is HOST:PORT, \(example)") }
            if let scheme = text.range(of: "://") {
                throw refuse("'\(text)': give HOST:PORT without '\(text[..<scheme.upperBound])', e.g. \(text[scheme.upperBound...])")
            }
            if text.contains(",") || text.contains(where: \.isWhitespace) {
                throw refuse("'\(text)' is not one address: give each HOST:PORT on its own")
            }
            let host: String
            let portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { throw refuse("'\(text)': the IPv6 address has no closing ']'") }
                host = String(text[text.index(after: text.startIndex)..<close])
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(":"), rest.count > 1 else {
                    throw refuse("'\(text)' has no port: write HOST:PORT, e.g. [\(host)]:7460")
                }
                portText = rest.dropFirst()
                guard Self.isIPv6(host) else {
                    throw refuse("'\(text)': '\(host)' is not an IPv6 address (only IPv6 addresses go in brackets)")
                }
            } else {
                let colons = text.filter { $0 == ":" }.count
                guard colons <= 1 else {
                    throw refuse("'\(text)': put an IPv6 address in brackets, e.g. [fe80::1%eth0]:7460")
                }
                guard colons == 1, let colon = text.firstIndex(of: ":"), text.index(after: colon) < text.endIndex else {
                    let bare = text.hasSuffix(":") ? String(text.dropLast()) : text
                    throw refuse("'\(text)' has no port: write HOST:PORT, e.g. \(bare.isEmpty ? "studio-mac.local" : bare):7460")
                }
                host = String(text[..<colon])
                portText = text[text.index(after: colon)...]
                guard !host.isEmpty else { throw refuse("'\(text)' has no host: \(example)") }
                if let problem = Self.problem(ofName: host) { throw refuse("'\(text)': \(problem)") }
            }
            guard let port = Int(portText), (1...65_535).contains(port) else {
                throw refuse("'\(text)': the port must be a number from 1 to 65535, not '\(portText)'")
            }
            self.host = host
            self.port = port
        }

        /// `HOST:PORT`, with brackets around an IPv6 host.
        package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        /// Checks a peer's addresses: each one, at most `maximumPerPeer`, the
        /// same one given twice kept once (in the order given).
        /// - Throws: `APIError(.badRequest)` naming the first bad address.
        package static func list(_ texts: [String]) throws(APIError) -> [String] {
            var addresses: [String] = []
            for text in texts {
                let address = try PeerAddress(text).description
                if !addresses.contains(address) { addresses.append(address) }
            }
            guard addresses.count <= maximumPerPeer else {
                throw APIError(.badRequest, "\(addresses.count) addresses for one peer; at most \(maximumPerPeer) are tried")
            }
            return addresses
        }

        private static func isIPv6(_ host: String) -> Bool {
            let parts = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(parts[0]), &address) == 1 else { return false }
            // A zone (`%eth0`) names the interface of a link-local address.
            return parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) })
        }

        /// What is wrong with a host name or IPv4 address, or nil.
        private static func problem(ofName host: String) -> String? {
            if host.allSatisfy({ $0.isNumber || $0 == "." }) {
                var address = in_addr()
                return inet_pton(AF_INET, host, &address) == 1
                    ? nil : "'\(host)' is not an IPv4 address (four numbers from 0 to 255, e.g. 192.168.1.20)"
            }
            let allowed = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }
            // A fully qualified name may end with a dot.
            let name = host.hasSuffix(".") ? host.dropLast() : Substring(host)
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            let wellFormed =
                !name.isEmpty && name.utf8.count <= 253
                && labels.allSatisfy { !$0.isEmpty && $0.count <= 63 && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            guard allowed && wellFormed else {
                return "'\(host)' is not a host name (ASCII letters, digits, '-' and '.', e.g. studio-mac.local) or an IP address"
            }
            return nil
        }
    }
}
