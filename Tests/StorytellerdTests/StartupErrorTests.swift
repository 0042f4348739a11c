import Dispatch
import Foundation
import StoryTestSupport
import Testing

@testable import StoryStore

/// Every way `storytellerd` can fail to start says so in one sentence a
/// person can act on (what is wrong, where, what to do) and exits 1: never a
/// Swift case name, a NIO function signature or an NSError dump, and never
/// "ready" first.
@Suite(.daemons, .timeLimit(.minutes(15))) struct StartupErrorTests {
    /// Runs the daemon with `arguments` until it exits (it must, within 30 s).
    private func failedStart(_ arguments: [String], setpriv: [String]? = nil) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0"] + arguments, environment: [:], setpriv: setpriv)
        defer { daemon.kill() }
        #expect(try await daemon.waitForExit() == 1, "\(arguments): \(daemon.errors)")
        return daemon
    }

    /// The one line of the failure, checked for what must never be in it.
    private func sentence(of daemon: DaemonProcess, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let lines = daemon.errors.split(separator: "\n").map(String.init)
        let critical = lines.filter { $0.contains(" critical storytellerd: ") }
        try #require(critical.count == 1, "one sentence: \(daemon.errors)", sourceLocation: sourceLocation)
        let text = String(critical[0].split(separator: ": ", maxSplits: 1).last ?? "")
        #expect(!lines.contains { $0.contains(" error ") }, "no other errors logged: \(daemon.errors)", sourceLocation: sourceLocation)
        #expect(!lines.contains { $0.hasSuffix(" ready") }, "never ready: \(daemon.errors)", sourceLocation: sourceLocation)
        for leak in ["Error Domain", "NSCocoaErrorDomain", "errno:", "(descriptor", "pathname:", "Error()", "DECODER", "error:"] {
            #expect(!text.contains(leak), "'\(leak)' in: \(text)", sourceLocation: sourceLocation)
        }
        // Swift case and type names are camelCase (`cannotOpen`, `UnixDomainSocketPathWrongType`); words are not.
        #expect(text.firstMatch(of: /[a-z][A-Z]/) == nil, "a code name in: \(text)", sourceLocation: sourceLocation)
        return text
    }

    /// Without systemd (a container, WSL), XDG_RUNTIME_DIR may name a
    /// directory no login session made: the daemon makes it (0700) when it
    /// may and serves its socket there; when it may not, it says what to do.
    @Test func aRuntimeDirectoryNobodyMadeIsMadeOrExplained() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let runtime = home.path + "/run/user/4242"
        let daemon = try DaemonProcess(
            arguments: ["--listen", "127.0.0.1:0"], environment: ["XDG_RUNTIME_DIR": runtime, "XDG_DATA_HOME": home.path + "/data"])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        var info = stat()
        #expect(stat(runtime, &info) == 0 && info.st_mode & 0o777 == 0o700, "made, private")
        #expect(FileManager.default.fileExists(atPath: runtime + "/storyteller/control.sock"))
        #expect(try await daemon.terminate() == 0)

        let impossible = "/proc/storyteller-runtime-\(getpid())"
        let refused = try DaemonProcess(
            arguments: ["--listen", "127.0.0.1:0"], environment: ["XDG_RUNTIME_DIR": impossible, "XDG_DATA_HOME": home.path + "/data2"])
        defer { refused.kill() }
        #expect(try await refused.waitForExit() == 1)
        let text = try sentence(of: refused)
        #expect(text.contains("XDG_RUNTIME_DIR is \(impossible)") && text.contains("Unset XDG_RUNTIME_DIR") && text.contains("--socket"), "\(text)")
    }

    @Test func aFileWhereTheStateDirectoryShouldBe() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/state"
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
        let text = try sentence(of: try await failedStart(["--data-dir", file]))
        #expect(text.contains("the state directory \(file) is a file, not a directory") && text.contains("--data-dir"), "\(text)")

        let below = try sentence(of: try await failedStart(["--data-dir", file + "/storyteller"]))
        #expect(below.contains("cannot create the state directory \(file)/storyteller: \(file) is a file, not a directory"), "\(below)")
    }

    @Test(.enabled(if: getuid() == 0, "running as another user needs root"))
    func aStateDirectoryThisUserMayNotCreate() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        // Root's directory, which nobody (uid 65534) may enter but not write.
        chmod(home.path, 0o755)
        let data = home.path + "/state"
        let text = try sentence(
            of: try await failedStart(["--data-dir", data], setpriv: ["--reuid=65534", "--regid=65534", "--clear-groups"]))
        #expect(text.contains("cannot create the state directory \(data): permission denied in \(home.path)"), "\(text)")
        #expect(text.contains("this user may create or write"), "\(text)")

        // Its own directory, but read-only to it.
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        chown(data, 65534, 65534)
        chmod(data, 0o500)
        let readOnly = try sentence(
            of: try await failedStart(["--data-dir", data], setpriv: ["--reuid=65534", "--regid=65534", "--clear-groups"]))
        #expect(readOnly.contains("cannot write in the state directory \(data) (\(data)/lock: Permission denied)"), "\(readOnly)")
        #expect(readOnly.contains("give this user write access to it"), "\(readOnly)")
    }

    @Test func aFileThatIsNotADatabase() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let database = home.path + "/storyteller.sqlite"
        let bytes = Data("storyboards, not SQLite\n".utf8)
        try bytes.write(to: URL(fileURLWithPath: database))
        let text = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(text.contains("\(database) is not a Storyteller database") && text.contains("move the file away"), "\(text)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == bytes, "the file was left as it was")
    }

    @Test func aDatabaseFromANewerVersion() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let database = home.path + "/storyteller.sqlite"
        do {
            let store = try StoreDatabase.open(path: database)
            try store.connection.run("INSERT INTO schema_migrations (id, applied) VALUES ('2099-01-01-future', 0)")
            try store.checkpoint()
        }
        let text = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(text.contains("the database \(database) was written by a newer version of Storyteller"), "\(text)")
        #expect(text.contains("install that version"), "\(text)")
    }

    @Test func aDamagedDatabase() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let database = home.path + "/storyteller.sqlite"
        do {
            let store = try StoreDatabase.open(path: database)
            try store.checkpoint()
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        // Its header is whole (it is still an SQLite file), its tables' pages are not.
        let handle = try #require(FileHandle(forUpdatingAtPath: database))
        let size = try handle.seekToEnd()
        try #require(size > 8192, "a database of several pages")
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: database))
        let text = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(text.contains("the database \(database) is damaged") && text.contains("put a backup in its place"), "\(text)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == damaged, "nothing was written to it")
    }

    @Test func aDamagedIdentity() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try FileManager.default.createDirectory(atPath: home.path + "/identity", withIntermediateDirectories: true)
        for name in ["key.pem", "cert.pem"] {
            try Data("-----BEGIN PRIVATE KEY-----\ngarbage\n".utf8).write(to: URL(fileURLWithPath: home.path + "/identity/" + name))
        }
        let text = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(text.contains("this machine's identity cannot be used: \(home.path)/identity/key.pem holds no private key"), "\(text)")
        #expect(text.contains("from a backup") && text.contains("new peer id"), "\(text)")

        // A file where the identity directory should be.
        try FileManager.default.removeItem(atPath: home.path + "/identity")
        try Data().write(to: URL(fileURLWithPath: home.path + "/identity"))
        let file = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(file.contains("cannot save this machine's new identity: \(home.path)/identity is a file, not a directory"), "\(file)")
    }

    @Test func aFileWhereImagesAndSoundsAreKept() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try Data().write(to: URL(fileURLWithPath: home.path + "/blobs"))
        let text = try sentence(of: try await failedStart(["--data-dir", home.path]))
        #expect(text.contains("cannot use the images and sounds store \(home.path)/blobs"), "\(text)")
    }

    @Test func aControlSocketThatCannotBeMade() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let file = home.path + "/file"
        try Data().write(to: URL(fileURLWithPath: file))
        // Its directory is a file.
        let inFile = try sentence(of: try await failedStart(["--data-dir", home.path + "/a", "--socket", file + "/control.sock"]))
        #expect(inFile.contains("the control socket's directory \(file) is a file, not a directory") && inFile.contains("--socket"), "\(inFile)")
        // Its directory cannot be made (a file on the way).
        let below = try sentence(of: try await failedStart(["--data-dir", home.path + "/b", "--socket", file + "/run/control.sock"]))
        #expect(below.contains("cannot create the control socket's directory \(file)/run: \(file) is a file, not a directory"), "\(below)")
        // Something that is not a socket is in the way.
        let taken = try sentence(of: try await failedStart(["--data-dir", home.path + "/c", "--socket", file]))
        #expect(taken.contains("\(file) exists and is not a socket; move it away, or give --socket another path"), "\(taken)")
        try FileManager.default.createDirectory(atPath: home.path + "/dir.sock", withIntermediateDirectories: true)
        let directory = try sentence(of: try await failedStart(["--data-dir", home.path + "/d", "--socket", home.path + "/dir.sock"]))
        #expect(directory.contains("\(home.path)/dir.sock exists and is not a socket"), "\(directory)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).isEmpty, "the file in the way was left alone")
    }

    @Test(.enabled(if: getuid() == 0, "running as another user needs root"))
    func aSocketDirectoryThisUserMayNotWrite() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        chmod(home.path, 0o777)
        let run = home.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let text = try sentence(
            of: try await failedStart(
                ["--data-dir", home.path + "/state", "--socket", run + "/control.sock"],
                setpriv: ["--reuid=65534", "--regid=65534", "--clear-groups"]))
        #expect(text.contains("cannot create the control socket in \(run): permission denied; give this user write access"), "\(text)")
    }

    @Test func aTakenPortIsOneSentenceAndNeverReady() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let first = try DaemonProcess(arguments: ["--data-dir", home.path + "/a", "--listen", "127.0.0.1:0"], environment: [:])
        defer { first.kill() }
        let port = try await first.waitForPort()
        let second = try DaemonProcess(arguments: ["--data-dir", home.path + "/b", "--listen", "127.0.0.1:\(port)"], environment: [:])
        defer { second.kill() }
        #expect(try await second.waitForExit() == 1)
        let text = try sentence(of: second)
        #expect(text == "port \(port) is in use on 127.0.0.1 (another storytellerd? give this one its own --listen HOST:PORT)", "\(text)")
        #expect(!FileManager.default.fileExists(atPath: home.path + "/b/control.sock"), "no socket left behind")
        #expect(try await first.terminate() == 0)
    }

    @Test func aDataDirectoryAnotherDaemonHoldsIsOneSentence() async throws {
        let first = try await StartedDaemon.start(name: "first")
        defer { first.stop() }
        let second = try await failedStart(["--data-dir", first.home.path])
        let text = try sentence(of: second)
        #expect(text.hasPrefix("another storytellerd (pid \(first.daemon.pid)) is already using \(first.home.path); stop it first"), "\(text)")
    }
}
