/// A TCP address to listen on.
/// `HOST:PORT`, with `[v6]:PORT` for IPv6 literals.
public struct ListenAddress: Equatable, Sendable {
    public struct Invalid: Error {}

    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
        else { throw Invalid() }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Invalid() }
        self.host = host
        self.port = port
    }
}
