// swift-tools-version: 6.2
import PackageDescription

/// Settings every Storyteller target shares: Swift 6 language mode (the tools
/// version's default), warnings as errors, and explicit existentials.
let strictSettings: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless it says `package` or `public`: what each
    // module exposes of the modules it uses is written down.
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The pure-Swift modules also see a module's members only where it is
/// imported. Not the targets that call the C library: Glibc's headers are
/// not modular, so which module owns `struct stat` or `sockaddr_in6`
/// (Glibc, or NIO's CNIOLinux, or Dispatch's, which include the same
/// headers) changes with the build, and the feature asked a debug build and
/// a release one for different imports of the same line.
let pureSettings = strictSettings + [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "Storyteller",
    // Only programs: the modules are this package's own (their API is
    // `package`, not `public`), shared by the daemon, the CLI and the tests.
    products: [
        .executable(name: "storytellerd", targets: ["storytellerd"]),
        .executable(name: "storyteller", targets: ["storyteller"]),
        .executable(name: "storyteller-bench", targets: ["storyteller-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // No default traits: they pull in swift-configuration and full Foundation support we do not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
    ],
    targets: [
        .target(name: "StoryCore", swiftSettings: pureSettings),
        // What a file of media is, from its bytes (pure Swift: probing, CRC-32, EXIF orientation).
        .target(name: "StoryMedia", dependencies: ["StoryCore"], swiftSettings: pureSettings),
        // Boards laid on time: the animatic timeline, EDL and FCPXML, SubRip, replay playback (pure Swift).
        .target(name: "StoryEditorial", dependencies: ["StoryCore"], swiftSettings: pureSettings),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "StoryStore", dependencies: ["StoryCore", "StoryMedia", "CSQLite", "COpenSSL", "CMalloc"], swiftSettings: strictSettings),
        .target(name: "StoryIdentity", dependencies: ["StoryCore", "COpenSSL"], swiftSettings: strictSettings),
        .target(
            name: "StoryTLS",
            dependencies: ["StoryCore", "StoryIdentity", "COpenSSL", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings),
        .target(
            name: "StorySync",
            dependencies: [
                "StoryCore", "StoryStore", "StoryIdentity", "StoryTLS",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings),
        // A peer that breaks the protocol on purpose, for the hostile tests and benchmark (no daemon links it).
        .target(
            name: "StoryWireClient",
            dependencies: [
                "StoryCore", "StoryIdentity", "StoryTLS", "StorySync",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "storyteller-bench",
            dependencies: [
                "StoryCore",
                "StoryMedia",
                "StoryStore",
                "StoryIdentity",
                "StoryTLS",
                "StorySync",
                "StoryWireClient",
                "StoryClient",
                "COpenSSL",
                "CMalloc",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `hostile` builds a zip bomb of a real package.
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "StoryAPI", dependencies: ["StoryCore"], swiftSettings: pureSettings),
        // cairo for the surfaces (PNG, SVG, PDF), pango for shaped and wrapped text on them,
        // libjpeg-turbo and libwebp for the pictures cairo does not read.
        .systemLibrary(
            name: "CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev", "libpango1.0-dev", "libjpeg-dev", "libwebp-dev"])]
        ),
        .target(name: "StoryRender", dependencies: ["StoryCore", "StoryMedia", "StoryEditorial", "CCairo"], swiftSettings: strictSettings),
        .target(
            name: "StoryDaemon",
            dependencies: [
                "StoryCore",
                "StoryMedia",
                "StoryEditorial",
                "StoryStore",
                "StoryIdentity",
                "StorySync",
                "StoryAPI",
                "StoryRender",
                "StoryClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "storytellerd",
            dependencies: [
                "StoryDaemon",
                "StoryAPI",
                "StoryStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "StoryClient", swiftSettings: strictSettings),
        .executableTarget(
            name: "storyteller",
            // StoryStore: `restore FILE` checks a backup and puts it back (SQLite, as the daemon reads it).
            dependencies: ["StoryClient", "StoryAPI", "StoryCore", "StoryStore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "StoryTestSupport",
            dependencies: [
                "StoryCore", "StoryIdentity", "CCairo", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/StoryTestSupport", swiftSettings: strictSettings),
        .testTarget(
            name: "StoryIdentityTests", dependencies: ["StoryIdentity", "StoryCore", "StoryTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "StoryClientTests", dependencies: ["StoryClient", "StoryTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "StoryAPITests", dependencies: ["StoryAPI", "StoryCore"], swiftSettings: strictSettings),
        .testTarget(
            name: "StoryRenderTests", dependencies: ["StoryRender", "StoryCore", "StoryMedia", "StoryEditorial", "CCairo", "StoryTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings),
        .testTarget(name: "StoryCoreTests", dependencies: ["StoryCore", "StoryTestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "StoryMediaTests", dependencies: ["StoryMedia", "StoryCore", "StoryTestSupport"], exclude: ["Fixtures"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StoryEditorialTests", dependencies: ["StoryEditorial", "StoryCore", "StoryTestSupport"], swiftSettings: strictSettings),
        .executableTarget(
            name: "StoreCrashHelper", dependencies: ["StoryCore", "StoryStore", "StoryIdentity"], path: "Tests/StoreCrashHelper",
            swiftSettings: strictSettings),
        .testTarget(
            name: "StoryTLSTests",
            dependencies: [
                "StoryTLS", "StoryIdentity", "StoryCore", "StoryTestSupport", "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StoryDaemonTests",
            dependencies: [
                "StoryDaemon", "StoryAPI", "StoryCore", "StoryStore", "StoryIdentity", "StorySync", "StoryTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Routes tested in memory, the Hummingbird way (`app.test(.router)`).
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StorySyncTests",
            dependencies: [
                "StorySync", "StoryStore", "StoryMedia", "StoryIdentity", "StoryTLS", "StoryTestSupport", "StoryWireClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StoryStoreTests", dependencies: ["StoryStore", "StoryMedia", "StoryTestSupport", "StoreCrashHelper"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "StorytellerdTests",
            dependencies: [
                "StoryCore", "StoryMedia", "StoryEditorial", "StoryStore", "StoryIdentity", "StoryTLS", "StorySync", "StoryWireClient", "StoryClient",
                "StoryAPI",
                "StoryDaemon", "StoryRender", "StoryTestSupport", "storytellerd",
                "storyteller", .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: strictSettings),
    ]
)
