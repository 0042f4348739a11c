import Foundation
import StoryClient
import StoryCore
import StoryStore
import StoryTestSupport
import Testing

/// `storyteller backup FILE`: the daemon streams a consistent copy of its
/// database over the control socket (`GET /v1/backup`) and the CLI writes it
/// as the calling user, mode 0600, so it works where the daemon may not
/// write (the hardened system unit).
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct BackupTests {
    /// The projects of a database file, by name.
    private func projectNames(in file: String) async throws -> Set<String> {
        let copy = try Store(path: file, identity: TestIdentities.signing())
        #expect(try await copy.integrityProblems().isEmpty)
        return Set(try await copy.documents().filter { $0.kind == .project }.compactMap(\.name))
    }

    private func mode(of path: String) -> (mode: mode_t, owner: uid_t)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o777, info.st_uid)
    }

    @Test func aBackupFromAnotherDirectoryIsTheCallersFileMode0600WithTheSameProjects() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        for name in ["Night Train", "Harbour"] { #expect(try await started.cli("projects", "create", name).status == 0) }
        let elsewhere = try TemporaryDirectory()
        defer { elsewhere.remove() }
        // A relative name, from a directory the daemon never heard of.
        let result = try await storyteller(["backup", "copy.sqlite", "--socket", started.socket], in: elsewhere.path)
        #expect(result.status == 0, "\(result.errors)")
        let file = elsewhere.path + "/copy.sqlite"
        #expect(result.output.hasPrefix("wrote \(file) ("), "\(result.output)")
        #expect(result.errors.isEmpty, "no progress when stderr is not a terminal: \(result.errors)")
        let written = try #require(mode(of: file))
        #expect(written.mode == 0o600 && written.owner == getuid())
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == ["copy.sqlite"], "no partial file is left")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: started.home.path + "/tmp").isEmpty,
            "the daemon's copy is gone once sent")
        #expect(try await projectNames(in: file) == ["Night Train", "Harbour"])

        // --json says where and how much.
        let json = try await storyteller(["backup", "again.sqlite", "--json", "--socket", started.socket], in: elsewhere.path)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let size = try FileManager.default.attributesOfItem(atPath: elsewhere.path + "/again.sqlite")[.size] as? Int
        #expect(answer["path"] as? String == elsewhere.path + "/again.sqlite" && answer["bytes"] as? Int == size)
    }

    @Test func theRouteStreamsTheWholeCopyWithItsLength() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        #expect(try await started.cli("projects", "create", "Streamed").status == 0)
        var received: [UInt8] = []
        var reports: [(Int, Int?)] = []
        let response = try started.client.download("/v1/backup", into: { received += $0 }, progress: { reports.append(($0, $1)) })
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/octet-stream")
        let length = try #require(response.headers["content-length"].flatMap { Int($0) })
        #expect(received.count == length && length > 0)
        #expect(Array(received.prefix(16)) == Array("SQLite format 3\0".utf8), "a SQLite database file")
        #expect(reports.first.map { $0.0 == 0 && $0.1 == length } == true && reports.last.map { $0.0 == length } == true)
    }

    @Test func aDestinationThatCannotBeWrittenIsRefusedBeforeTheDaemonCopies() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let existing = directory.path + "/existing.sqlite"
        try "keep me".write(toFile: existing, atomically: true, encoding: .utf8)
        let cases: [(file: String, words: String)] = [
            (existing, "already exists"),
            (directory.path, "is a directory"),
            (directory.path + "/no/such/dir/copy.sqlite", "the directory \(directory.path)/no/such/dir does not exist"),
        ]
        for item in cases {
            let result = try await started.cli("backup", item.file)
            #expect(result.status == 1 && result.errors.contains(item.words), "\(item.file): \(result.errors)")
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me", "an existing file is never replaced")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["existing.sqlite"])
    }

    /// Needs root (setpriv) to be another user; skipped otherwise.
    @Test(.enabled(if: getuid() == 0, "running as another user needs root"))
    func aDirectoryTheCallerMayNotWriteIsSaidInWords() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        chmod(directory.path, 0o755)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", productsDirectory.appendingPathComponent("storyteller").path,
            "backup", directory.path + "/copy.sqlite", "--socket", directory.path + "/none.sock",
        ]
        process.environment = TestEnvironment.make()
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(text.contains("you may not write in \(directory.path) (permission denied)"), "\(text)")
        #expect(!text.contains("cannot reach"), "said before asking the daemon")
    }

    /// The case the streamed backup is for: a daemon running as its own user
    /// (as the hardened unit runs it) that could not write the file, and a
    /// caller writing it where only the caller may. Needs root; skipped otherwise.
    @Test(.enabled(if: getuid() == 0, "running the daemon as another user needs root"))
    func theCopyIsWrittenWhereOnlyTheCallerMayWriteNotTheDaemon() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        chown(home.path, 65534, 65534)
        let socket = home.path + "/control.sock"
        // The daemon as nobody, in group 0 too so that it may give root's group the socket.
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", home.path, "--socket", socket, "--socket-group", "root", "--listen", "127.0.0.1:0"],
            environment: [:], setpriv: ["--reuid=65534", "--regid=65534", "--groups=0"])
        defer { daemon.kill() }
        try await daemon.waitForLog("ready")
        #expect(try await storyteller(["projects", "create", "Private", "--socket", socket]).status == 0)
        let mine = try TemporaryDirectory()
        defer { mine.remove() }
        chmod(mine.path, 0o700)  // root's alone: nobody may not even look inside
        let file = mine.path + "/copy.sqlite"
        let result = try await storyteller(["backup", file, "--socket", socket])
        #expect(result.status == 0, "\(result.errors)")
        let written = try #require(mode(of: file))
        #expect(written.mode == 0o600 && written.owner == 0, "the caller's file")
        #expect(try await projectNames(in: file) == ["Private"])
        #expect(try await daemon.terminate() == 0)
    }

    /// A backup whose copy does not fit the daemon's disk is a 507 that says
    /// so, before any byte is sent, and leaves nothing on either side. Needs
    /// a small file system: a 64 KiB tmpfs the test mounts on the daemon's
    /// scratch directory and removes (root only; skipped elsewhere).
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aCopyThatDoesNotFitTheDaemonsDiskIsA507AndLeavesNothing() async throws {
        let home = try TemporaryDirectory()
        let scratch = home.path + "/tmp"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try mount(tmpfsOfBytes: 64 << 10, at: scratch)
        defer { unmount(scratch) }
        let started = try await StartedDaemon.start(in: home)
        defer { started.stop() }
        let project = try await started.cli("projects", "create", "Big enough").output.trimmingCharacters(in: .whitespacesAndNewlines)
        let scene = try await started.cli("scenes", "add", project).output.trimmingCharacters(in: .whitespacesAndNewlines)
        for index in 0..<20 {
            _ = try await started.cli("scenes", "set", project, scene, "--title", String(repeating: "x", count: 4_000) + "\(index)")
        }

        let answer = try started.client.get("/v1/backup")
        #expect(answer.status == 507, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.errorCode == "insufficient_storage")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty, "no partial copy is left")

        let elsewhere = try TemporaryDirectory()
        defer { elsewhere.remove() }
        let result = try await storyteller(["backup", "copy.sqlite", "--socket", started.socket], in: elsewhere.path)
        #expect(result.status == 1 && result.errors.contains("no room for a copy of the database"), "\(result.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "nothing is left at the destination")
        #expect(try started.client.get("/v1/projects/\(project)").status == 200, "the daemon goes on")
    }

    private func mount(tmpfsOfBytes bytes: Int, at path: String) throws {
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path]
        try mount.run()
        mount.waitUntilExit()
        try #require(mount.terminationStatus == 0, "cannot mount a tmpfs here")
    }

    private func unmount(_ path: String) {
        let unmount = Process()
        unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
        unmount.arguments = [path]
        try? unmount.run()
        unmount.waitUntilExit()
    }
}

/// Which daemon the CLI talks to when given no socket: the user's own, else
/// the system daemon's (`STORYTELLER_SYSTEM_SOCKET` stands in for
/// /run/storyteller/control.sock here); `--socket` and `STORYTELLER_SOCKET` win.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct SocketLookupTests {
    @Test func withNoUserDaemonTheCLIUsesTheSystemDaemonsSocket() async throws {
        let system = try await StartedDaemon.start(name: "system")
        defer { system.stop() }
        let runtime = try TemporaryDirectory()  // a desktop session with no user daemon
        defer { runtime.remove() }
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "STORYTELLER_SYSTEM_SOCKET": system.socket]
        let id = try await storyteller(["id"], environment: environment)
        #expect(id.status == 0, "\(id.errors)")
        #expect(id.output.trimmingCharacters(in: .whitespacesAndNewlines) == (try system.peerID()))

        // Given sockets win, even when nothing answers there.
        let given = try await storyteller(["id"], environment: environment.merging(["STORYTELLER_SOCKET": runtime.path + "/given.sock"]) { $1 })
        #expect(given.status == 69 && given.errors.contains("cannot reach the daemon at \(runtime.path)/given.sock"), "\(given.errors)")
        let flag = try await storyteller(["id", "--socket", runtime.path + "/flag.sock"], environment: environment)
        #expect(flag.status == 69 && flag.errors.contains("\(runtime.path)/flag.sock"))
    }

    @Test func aUserDaemonComesBeforeTheSystemDaemon() async throws {
        let system = try await StartedDaemon.start(name: "system")
        defer { system.stop() }
        let runtime = try TemporaryDirectory()
        defer { runtime.remove() }
        let userHome = try TemporaryDirectory()
        let user = try await StartedDaemon.start(in: userHome, name: "user", ["--socket", runtime.path + "/storyteller/control.sock"])
        defer { user.stop() }
        let userIdentity = try ControlClient(path: runtime.path + "/storyteller/control.sock").get("/v1/identity").json as? [String: Any]
        let userID = try #require(userIdentity?["peerID"] as? String)
        let id = try await storyteller(["id"], environment: ["XDG_RUNTIME_DIR": runtime.path, "STORYTELLER_SYSTEM_SOCKET": system.socket])
        #expect(id.output.trimmingCharacters(in: .whitespacesAndNewlines) == userID)
        #expect(userID != (try system.peerID()))
    }

    @Test func whenNothingAnswersTheErrorNamesEverySocketTried() async throws {
        let runtime = try TemporaryDirectory()
        defer { runtime.remove() }
        let result = try await storyteller(
            ["status"], environment: ["XDG_RUNTIME_DIR": runtime.path, "STORYTELLER_SYSTEM_SOCKET": runtime.path + "/system.sock"])
        #expect(result.status == 69)
        #expect(result.errors.contains("nothing answers at \(runtime.path)/storyteller/control.sock (a user daemon's socket)"), "\(result.errors)")
        #expect(result.errors.contains("nor at \(runtime.path)/system.sock (the system daemon's)"))
        #expect(result.errors.contains("is storytellerd running?"))
    }

    /// `storyteller restore FILE` puts a backup back: refused while the
    /// daemon runs (saying how to stop it), and once it is stopped (killed,
    /// so its write-ahead log still holds an edit made after the backup) the
    /// backup replaces the database, the stale log and shared memory go, and
    /// the daemon starts with what the backup holds: the later edit is gone.
    @Test func aRestoredBackupIsWhatTheDaemonStartsWithAndALaterEditIsGone() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let project = try await started.cli("projects", "create", "Night Train").output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await started.cli("scenes", "add", project, "--title", "Before").status == 0)
        let files = try TemporaryDirectory()
        defer { files.remove() }
        let backup = files.path + "/backup.sqlite"
        #expect(try await started.cli("backup", backup).status == 0)
        #expect(try await started.cli("scenes", "add", project, "--title", "After the backup").status == 0)

        let refused = try await storyteller(["restore", backup, "--data-dir", started.home.path])
        #expect(refused.status != 0 && refused.errors.contains("running") && refused.errors.contains("stop"), "\(refused.errors)")

        started.daemon.kill()
        let database = started.home.path + "/storyteller.sqlite"
        #expect(FileManager.default.fileExists(atPath: database + "-wal"), "the killed daemon left its write-ahead log")
        let restored = try await storyteller(["restore", backup, "--data-dir", started.home.path])
        #expect(restored.status == 0, "\(restored.errors)")
        #expect(restored.output.contains("restored"), "\(restored.output)")
        #expect(!FileManager.default.fileExists(atPath: database + "-wal") && !FileManager.default.fileExists(atPath: database + "-shm"))

        let again = try await StartedDaemon.start(in: started.home)
        defer { again.daemon.kill() }
        let scenes = (try await again.json("projects", "show", project) as? [String: Any])?["scenes"] as? [[String: Any]] ?? []
        let titles = scenes.compactMap { $0["title"] as? String }
        #expect(titles == ["Before"], "\(titles)")
        // A file that is no backup is refused, and the database is left as it is.
        let bogus = files.path + "/notes.txt"
        _ = FileManager.default.createFile(atPath: bogus, contents: Data("just some words".utf8))
        again.daemon.kill()
        let notABackup = try await storyteller(["restore", bogus, "--data-dir", started.home.path])
        #expect(
            notABackup.status != 0 && notABackup.errors.contains("not restored") && notABackup.errors.contains("not an SQLite database"),
            "\(notABackup.errors)")
    }
}
