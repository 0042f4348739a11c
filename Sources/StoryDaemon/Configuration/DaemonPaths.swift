import Foundation
import StoryClient

/// Where the daemon keeps its state, from flags and the XDG environment.
package struct DaemonPaths: Sendable {
    package static let defaultPeerPort = 7460

    package let dataDirectory: String
    package var identityDirectory: String { dataDirectory + "/identity" }
    package var databasePath: String { dataDirectory + "/storyteller.sqlite" }
    /// The daemon's scratch space (backup copies on their way to a client):
    /// in the state directory, which the daemon may write under the hardened
    /// system unit (its /tmp is private and may be small), and on the same
    /// disk as the database it copies. Emptied at start.
    package var temporaryDirectory: String { dataDirectory + "/tmp" }
    /// Images' and sounds' bytes, by SHA-256, with their own index (`blobs.sqlite3`).
    package var blobDirectory: String { dataDirectory + "/blobs" }
    /// The socket given, else `control.sock` beside a data directory given
    /// (a daemon of its own: two such never share a socket), else the default
    /// `$XDG_RUNTIME_DIR/storyteller/control.sock` or one in the default state directory.
    package let socketPath: String

    /// The defaults are the ones the CLI assumes (`ControlClient`), so both find the same socket.
    package init(dataDirectory: String?, socket: String?, environment: [String: String]) {
        let directory = dataDirectory ?? ControlClient.defaultDataDirectory(environment: environment)
        self.dataDirectory = directory
        if let socket {
            socketPath = socket
        } else if dataDirectory != nil {
            socketPath = directory + "/control.sock"
        } else {
            socketPath = ControlClient.defaultSocketPath(dataDirectory: directory, environment: environment)
        }
    }
}
