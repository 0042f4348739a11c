import Foundation

/// Making the daemon's directories with reasons a person can act on
/// (Foundation's `createDirectory` says only "the operation could not be
/// completed" on Linux).
enum Directories {
    /// Makes `path` with exactly `mode` (whatever the umask) and its missing
    /// parents (0755 less the umask, as `mkdir -p`); an existing directory
    /// is left as it is.
    /// - Returns: nil once it exists, else why not: which part of the path
    ///   is a file, or what `mkdir` said and where ("permission denied in /srv").
    static func make(_ path: String, mode: mode_t) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : "\(path) is a file, not a directory"
        }
        if let problem = makeWithParents(path, mode: mode) { return problem }
        chmod(path, mode)
        return nil
    }

    private static func makeWithParents(_ path: String, mode: mode_t) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : "\(path) is a file, not a directory"
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path, let problem = makeWithParents(parent, mode: 0o755) { return problem }
        guard mkdir(path, mode) == 0 || errno == EEXIST else {
            return "\(String(cString: strerror(errno)).lowercased()) in \(parent.isEmpty ? "/" : parent)"
        }
        return nil
    }
}
