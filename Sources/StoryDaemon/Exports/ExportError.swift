/// Why an export failed: ffmpeg missing or failing, a frame that did not
/// render, the scratch directory, or the job being cancelled.
struct ExportError: Error, Sendable, CustomStringConvertible {
    struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case ffmpegMissing, ffmpegFailed, render, files, cancelled
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// ffmpeg, or an encoder the export needs, is not on this machine.
        static let ffmpegMissing = Code(.ffmpegMissing)
        /// ffmpeg ran and failed, or ran out of time.
        static let ffmpegFailed = Code(.ffmpegFailed)
        /// A frame could not be drawn.
        static let render = Code(.render)
        /// The scratch directory could not be written.
        static let files = Code(.files)
        /// The job was deleted or the daemon is shutting down.
        static let cancelled = Code(.cancelled)

        var description: String { base.rawValue }
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    var description: String { message }
}
