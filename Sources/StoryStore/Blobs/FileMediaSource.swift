import Foundation
import StoryCore
package import StoryMedia

/// A file read for `MediaProbe` with `pread`, never whole.
package struct FileMediaSource: MediaSource {
    let descriptor: FileDescriptorBox
    package let byteCount: UInt64

    final class FileDescriptorBox: @unchecked Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    /// Opens a file to probe.
    /// - Throws: `MediaError(.unreadable)` if it cannot be opened.
    package init(path: String) throws(MediaError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError(.unreadable, "the file cannot be read: \(String(cString: strerror(errno)))") }
        descriptor = FileDescriptorBox(fd)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw MediaError(.unreadable, "the file cannot be read: \(String(cString: strerror(errno)))") }
        byteCount = UInt64(info.st_size)
    }

    package func read(at offset: UInt64, count: Int) throws(MediaError) -> [UInt8] {
        guard count > 0, offset < byteCount else { return [] }
        let wanted = Int(min(UInt64(count), byteCount - offset))
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor.fd, $0.baseAddress! + done, wanted - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { break }
                throw MediaError(.unreadable, "the file cannot be read: \(String(cString: strerror(errno)))")
            }
            done += n
        }
        return done == wanted ? bytes : Array(bytes.prefix(done))
    }
}
