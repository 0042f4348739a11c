extension API {
    /// This build of Storyteller: the daemon, the CLI and the API they
    /// speak. Both binaries print it for `--version`; the daemon answers it
    /// at `/v1/version` and as the `storyteller_build_info` metric.
    public static let version = "0.11.0"

    /// `GET /v1/version`.
    public struct VersionInfo: Codable, Sendable {
        /// The daemon's version (`API.version` of its build).
        public let version: String
        /// The control API's version, the path prefix (`v1`).
        public let api: String

        public init(version: String = API.version, api: String = "v1") {
            self.version = version
            self.api = api
        }
    }
}
