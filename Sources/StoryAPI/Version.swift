extension API {
    /// This build of Storyteller: the daemon, the CLI and the API they
    /// speak. Both binaries print it for `--version`; the daemon answers it
    /// at `/v1/version` and as the `storyteller_build_info` metric.
    package static let version = "0.11.0"

    /// `GET /v1/version`.
    package struct VersionInfo: Codable, Sendable {
        /// The daemon's version (`API.version` of its build).
        package let version: String
        /// The control API's version, the path prefix (`v1`).
        package let api: String

        package init(version: String = API.version, api: String = "v1") {
            self.version = version
            self.api = api
        }
    }
}
