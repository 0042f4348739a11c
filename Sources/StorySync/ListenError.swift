import Foundation
import NIOCore

/// The peer listener could not be opened, in words a person can act on
/// (not NIO's `bind(descriptor:ptr:bytes:)`).
package struct ListenError: Error, CustomStringConvertible, Sendable {
    package let host: String
    package let port: Int
    package let description: String

    init(host: String, port: Int, error: any Error) {
        self.host = host
        self.port = port
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE:
            description = "port \(port) is in use on \(host) (another storytellerd? give this one its own --listen HOST:PORT)"
        case EACCES:
            description = "listening on port \(port) needs privileges this user does not have (use a port above 1023)"
        case EADDRNOTAVAIL:
            description = "\(host) is not an address of this machine (--listen takes one of its own addresses, or 0.0.0.0)"
        case let code?:
            description = "cannot listen for peers on \(address): \(String(cString: strerror(code)))"
        case nil:
            description = "cannot listen for peers on \(address): \(error)"
        }
    }
}
