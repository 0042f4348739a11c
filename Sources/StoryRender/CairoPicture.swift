import CCairo
import Glibc
import StoryCore
import StoryMedia

/// A decoded picture: a cairo image surface this object owns (destroyed in
/// `deinit`). PNG is read by cairo; JPEG by libjpeg-turbo and WebP by libwebp,
/// both reduced while decoding to about the size they are drawn at.
final class CairoPicture {
    let surface: OpaquePointer
    /// The decoded pixels' size, as stored (before `orientation`).
    let width: Int
    let height: Int
    /// How the stored pixels turn to be seen upright (EXIF, JPEG only; 1: as stored).
    private(set) var orientation = 1

    /// Files larger than this are not read (blob-max-bytes bounds them anyway).
    static let maximumFileBytes = 256 << 20

    private init(adopting surface: OpaquePointer) {
        self.surface = surface
        width = Int(cairo_image_surface_get_width(surface))
        height = Int(cairo_image_surface_get_height(surface))
    }

    deinit { cairo_surface_destroy(surface) }

    /// Reads and decodes the picture in `path`.
    ///
    /// - Parameters:
    ///   - wanted: the size in pixels it is drawn at; JPEG and WebP are
    ///     decoded no smaller than that, and no larger than needed.
    ///   - maximumPixels: a picture that would decode to more is refused.
    ///   - keepingOriginal: attach the file's own bytes when they stand for
    ///     the whole picture (JPEG, PNG), for PDF and SVG to embed as they are.
    /// - Returns: the picture, or why it cannot be drawn (for the placeholder).
    static func load(
        path: String, type: MediaType, wanted: (width: Int, height: Int), maximumPixels: Int, keepingOriginal: Bool
    ) -> Result<CairoPicture, PictureFailure> {
        let file: FileBytes
        switch FileBytes.read(path, limit: maximumFileBytes) {
        case .success(let bytes): file = bytes
        case .failure(let failure): return .failure(failure)
        }
        var message = [CChar](repeating: 0, count: 256)
        let made: OpaquePointer?
        var whole: Int32 = 0
        // A JPEG turned by EXIF is stored the other way round: decode it to the stored sides.
        let orientation = type == .jpeg ? JPEGOrientation.orientation(ofJPEG: UnsafeRawBufferPointer(start: file.base, count: file.count)) : 1
        let wanted = JPEGOrientation.swapsSides(orientation) ? (width: wanted.height, height: wanted.width) : wanted
        switch type {
        case .png:
            // The header says the size: refuse before cairo allocates for it.
            guard let size = pngSize(file), size.width * size.height <= maximumPixels else {
                return .failure(PictureFailure("a PNG over the \(maximumPixels / 1_000_000)-megapixel limit, or not a PNG"))
            }
            made = file.decodePNG()
            whole = 1
        case .jpeg:
            made = st_decode_jpeg(
                file.base, UInt(file.count), UInt(wanted.width), UInt(wanted.height), UInt(maximumPixels), &whole, &message,
                message.count)
        case .webp:
            made = st_decode_webp(
                file.base, file.count, UInt(wanted.width), UInt(wanted.height), UInt(maximumPixels), &message, message.count)
        default:
            return .failure(PictureFailure("\(type.mimeType) is not a picture"))
        }
        guard let made else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(PictureFailure(reason.isEmpty ? "\(type.mimeType) does not decode" : reason))
        }
        let status = cairo_surface_status(made)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(made)
            return .failure(PictureFailure("does not decode: \(CairoCanvas.text(status))"))
        }
        let picture = CairoPicture(adopting: made)
        picture.orientation = orientation
        // A turned JPEG is not embedded as it is: a viewer may or may not honour its EXIF turn as well.
        if keepingOriginal, whole != 0, orientation == 1, type == .jpeg || type == .png {
            file.attach(to: made, as: type.mimeType)
        }
        return .success(picture)
    }

    /// The width and height in a PNG's header (IHDR), if it has one.
    private static func pngSize(_ file: FileBytes) -> (width: Int, height: Int)? {
        guard file.count >= 24 else { return nil }
        let bytes = UnsafeRawBufferPointer(start: file.base, count: 24)
        guard Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array(bytes[12..<16]) == Array("IHDR".utf8) else {
            return nil
        }
        func word(_ offset: Int) -> Int { bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (word(16), word(20))
    }
}

/// Why a picture is drawn as an outline instead.
struct PictureFailure: Error, Hashable, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A file's bytes in memory from `malloc`, handed to cairo (which frees them
/// with the surface) or freed here.
private final class FileBytes {
    private(set) var base: UnsafeMutablePointer<UInt8>?
    let count: Int
    private var offset = 0

    private init(base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { free(base) }

    static func read(_ path: String, limit: Int) -> Result<FileBytes, PictureFailure> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(PictureFailure("cannot be read (\(String(cString: strerror(errno))))")) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(PictureFailure("cannot be read (\(String(cString: strerror(errno))))")) }
        let size = Int(status.st_size)
        guard size > 0, size <= limit else { return .failure(PictureFailure("a file of \(size) bytes is not drawn")) }
        guard let raw = malloc(size) else { return .failure(PictureFailure("out of memory")) }
        let base = raw.bindMemory(to: UInt8.self, capacity: size)
        let bytes = FileBytes(base: base, count: size)
        var done = 0
        while done < size {
            let got = Glibc.read(descriptor, base + done, size - done)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return .failure(PictureFailure("cannot be read whole")) }
            done += got
        }
        return .success(bytes)
    }

    /// Decodes the bytes as a PNG with cairo's reader.
    func decodePNG() -> OpaquePointer? {
        offset = 0
        return cairo_image_surface_create_from_png_stream(
            { closure, data, length in
                guard let closure, let data else { return CAIRO_STATUS_READ_ERROR }
                let file = Unmanaged<FileBytes>.fromOpaque(closure).takeUnretainedValue()
                guard let base = file.base, file.count - file.offset >= Int(length) else { return CAIRO_STATUS_READ_ERROR }
                data.update(from: base + file.offset, count: Int(length))
                file.offset += Int(length)
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Gives the bytes to `surface` as its original encoding (`mimeType`); cairo frees them with it.
    func attach(to surface: OpaquePointer, as mimeType: String) {
        guard let base else { return }
        let status = cairo_surface_set_mime_data(surface, mimeType, base, UInt(count), { free($0) }, base)
        if status == CAIRO_STATUS_SUCCESS { self.base = nil }
    }
}
