import CCairo
import StoryCore
import StoryMedia

/// A cairo surface of one of the three formats and its drawing context: the
/// one owner of both handles (destroyed in `deinit`, never handed out). The
/// file's bytes are collected in memory as cairo writes them.
///
/// Coordinates are pixels of the panel (y down) in every format; the PDF
/// page is scaled so that a pixel is 0.75 pt (a CSS pixel).
final class CairoCanvas {
    let format: PanelFormat
    let width: Int
    let height: Int
    private let surface: OpaquePointer
    private let context: OpaquePointer
    private let sink = ByteSink()

    /// A PDF point per panel pixel.
    static let pdfPointsPerPixel = 0.75

    /// - Throws: `RenderError.cairo` if cairo cannot make the surface (out of memory).
    init(format: PanelFormat, width: Int, height: Int, title: String) throws(RenderError) {
        self.format = format
        self.width = width
        self.height = height
        let closure = Unmanaged.passUnretained(sink).toOpaque()
        let write: cairo_write_func_t = { closure, data, length in
            guard let closure else { return CAIRO_STATUS_WRITE_ERROR }
            let sink = Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue()
            if let data, length > 0 { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length))) }
            return CAIRO_STATUS_SUCCESS
        }
        let made: OpaquePointer?
        switch format {
        case .png:
            made = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
        case .svg:
            made = cairo_svg_surface_create_for_stream(write, closure, Double(width), Double(height))
            // Plain numbers (user units): width="1600" height="900", not points.
            if let made { cairo_svg_surface_set_document_unit(made, CAIRO_SVG_UNIT_USER) }
        case .pdf:
            made = cairo_pdf_surface_create_for_stream(
                write, closure, Double(width) * Self.pdfPointsPerPixel, Double(height) * Self.pdfPointsPerPixel)
            if let made {
                cairo_pdf_surface_set_metadata(made, CAIRO_PDF_METADATA_TITLE, title)
                cairo_pdf_surface_set_metadata(made, CAIRO_PDF_METADATA_CREATOR, "Storyteller")
            }
        }
        guard let made else { throw RenderError(.cairo, "cairo made no surface") }
        let status = cairo_surface_status(made)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(made)
            throw RenderError(.cairo, "cannot make a \(width)×\(height) \(format.rawValue) surface: \(Self.text(status))")
        }
        surface = made
        context = cairo_create(made)
        if format == .pdf { cairo_scale(context, Self.pdfPointsPerPixel, Self.pdfPointsPerPixel) }
    }

    /// A PDF of pages `pageWidth`×`pageHeight` points, drawn in points (a
    /// print sheet): pages end with `endPage()`, and `takeWritten()` hands
    /// over what cairo has written so far, so a long document goes out page
    /// by page rather than whole at the end.
    /// - Throws: `RenderError.cairo` if cairo cannot make the surface.
    init(pdfPageWidth pageWidth: Double, pageHeight: Double, title: String) throws(RenderError) {
        format = .pdf
        width = Int(pageWidth.rounded())
        height = Int(pageHeight.rounded())
        let closure = Unmanaged.passUnretained(sink).toOpaque()
        let made = cairo_pdf_surface_create_for_stream(
            { closure, data, length in
                guard let closure else { return CAIRO_STATUS_WRITE_ERROR }
                let sink = Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue()
                if let data, length > 0 { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length))) }
                return CAIRO_STATUS_SUCCESS
            }, closure, pageWidth, pageHeight)
        guard let made else { throw RenderError(.cairo, "cairo made no surface") }
        let status = cairo_surface_status(made)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(made)
            throw RenderError(.cairo, "cannot make a \(pageWidth)×\(pageHeight) pt PDF surface: \(Self.text(status))")
        }
        cairo_pdf_surface_set_metadata(made, CAIRO_PDF_METADATA_TITLE, title)
        cairo_pdf_surface_set_metadata(made, CAIRO_PDF_METADATA_CREATOR, "Storyteller")
        surface = made
        context = cairo_create(made)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    // MARK: - State

    func save() { cairo_save(context) }
    func restore() { cairo_restore(context) }

    /// Applies a transform in pixels (`x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`) to what is drawn next.
    func transform(by t: Affine) {
        var matrix = cairo_matrix_t(xx: t.a, yx: t.b, xy: t.c, yy: t.d, x0: t.tx, y0: t.ty)
        cairo_transform(context, &matrix)
    }

    /// Moves the origin to (x, y) for what is drawn next.
    func translate(x: Double, y: Double) { cairo_translate(context, x, y) }

    /// Limits what is drawn next to a rectangle (until `restore`).
    func clip(x: Double, y: Double, width: Double, height: Double) {
        cairo_new_path(context)
        cairo_rectangle(context, x, y, width, height)
        cairo_clip(context)
    }

    /// Starts drawing into an intermediate group (ended by one of the `endGroup` methods).
    func beginGroup() { cairo_push_group(context) }

    /// Ends the group and paints it at `opacity` (a layer's opacity).
    func endGroup(opacity: Double) {
        cairo_pop_group_to_source(context)
        cairo_paint_with_alpha(context, opacity)
    }

    /// Ends the group and paints `colour` at `alpha` wherever the group has ink (an onion skin's tint).
    func endGroup(tintedWith colour: (red: Double, green: Double, blue: Double), alpha: Double) {
        let group = cairo_pop_group(context)
        cairo_set_source_rgba(context, colour.red, colour.green, colour.blue, alpha)
        cairo_mask(context, group)
        cairo_pattern_destroy(group)
    }

    // MARK: - Drawing

    /// Fills a rectangle.
    func fillRectangle(x: Double, y: Double, width: Double, height: Double, colour: Color) {
        cairo_new_path(context)
        cairo_rectangle(context, x, y, width, height)
        setSource(colour)
        cairo_fill(context)
    }

    /// A straight line.
    func line(from start: CanvasPoint, to end: CanvasPoint, width lineWidth: Double, colour: Color) {
        cairo_new_path(context)
        cairo_move_to(context, start.x, start.y)
        cairo_line_to(context, end.x, end.y)
        cairo_set_line_width(context, lineWidth)
        cairo_set_line_cap(context, CAIRO_LINE_CAP_BUTT)
        setSource(colour)
        cairo_stroke(context)
    }

    /// `text` laid out by Pango for this canvas (see `TextBlock`), wrapped at `width`.
    func textBlock(
        _ text: String, size: Double, bold: Bool = false, italic: Bool = false, width: Double, alignment: TextBlock.Alignment = .left,
        boldPrefixes: [String] = []
    ) -> TextBlock {
        TextBlock(text, size: size, bold: bold, italic: italic, width: width, alignment: alignment, boldPrefixes: boldPrefixes, on: context)
    }

    /// Draws a text block with its top left corner at (x, y).
    func draw(_ block: TextBlock, x: Double, y: Double, colour: Color) {
        block.draw(
            on: context, x: x, y: y, red: Double(colour.red) / 255, green: Double(colour.green) / 255, blue: Double(colour.blue) / 255,
            alpha: Double(colour.alpha) / 255)
    }

    /// Fills the whole canvas.
    func paint(_ colour: Color) {
        setSource(colour)
        cairo_paint(context)
    }

    /// Fills the pieces of an outline together (non-zero rule: their union).
    /// `erasing` takes the ink away instead (inside a group).
    func fill(_ shapes: [OutlineShape], colour: Color, erasing: Bool = false) {
        guard !shapes.isEmpty else { return }
        cairo_new_path(context)
        for shape in shapes {
            switch shape {
            case .polygon(let points):
                guard let first = points.first else { continue }
                cairo_move_to(context, first.x, first.y)
                for point in points.dropFirst() { cairo_line_to(context, point.x, point.y) }
                cairo_close_path(context)
            case .circle(let center, let radius):
                cairo_new_sub_path(context)
                cairo_arc(context, center.x, center.y, radius, 0, 2 * Double.pi)
                cairo_close_path(context)
            }
        }
        cairo_set_fill_rule(context, CAIRO_FILL_RULE_WINDING)
        draw(colour: colour, erasing: erasing) { cairo_fill($0) }
    }

    /// Strokes a polyline of one width with cairo's own caps and joins.
    func stroke(_ points: [CanvasPoint], width: Double, cap: Brush.Cap, join: Brush.Join, colour: Color, erasing: Bool = false) {
        guard let first = points.first else { return }
        cairo_new_path(context)
        cairo_move_to(context, first.x, first.y)
        if points.count == 1 {
            cairo_close_path(context)  // a dot: cairo caps a closed zero-length path
        } else {
            for point in points.dropFirst() { cairo_line_to(context, point.x, point.y) }
        }
        cairo_set_line_width(context, width)
        cairo_set_line_cap(context, Self.cairoCap(cap))
        cairo_set_line_join(context, Self.cairoJoin(join))
        cairo_set_miter_limit(context, StrokeOutline.miterLimit)
        draw(colour: colour, erasing: erasing) { cairo_stroke($0) }
    }

    /// Outlines a rectangle; `dash` in pixels (empty: solid).
    func strokeRectangle(x: Double, y: Double, width: Double, height: Double, lineWidth: Double, colour: Color, dash: [Double] = []) {
        cairo_new_path(context)
        cairo_rectangle(context, x, y, width, height)
        cairo_set_line_width(context, lineWidth)
        cairo_set_line_join(context, CAIRO_LINE_JOIN_MITER)
        cairo_set_dash(context, dash, Int32(dash.count), 0)
        setSource(colour)
        cairo_stroke(context)
        cairo_set_dash(context, nil, 0, 0)
    }

    /// Fills a rectangle with a colour at `alpha` (0…1).
    func fillRectangle(x: Double, y: Double, width: Double, height: Double, colour: Color, alpha: Double = 1) {
        cairo_new_path(context)
        cairo_rectangle(context, x, y, width, height)
        cairo_set_source_rgba(context, Double(colour.red) / 255, Double(colour.green) / 255, Double(colour.blue) / 255, alpha)
        cairo_fill(context)
    }

    /// A paragraph laid out by Pango for this canvas (see `TextBlock`).
    func textBlock(
        _ text: String, size: Double, bold: Bool = false, width: Double, alignment: TextBlock.Alignment = .left
    ) -> TextBlock {
        TextBlock(text, size: size, bold: bold, width: width, alignment: alignment, on: context)
    }

    /// Draws a laid-out paragraph with its top left corner at (x, y).
    func draw(_ block: TextBlock, x: Double, y: Double, colour: Color, alpha: Double = 1) {
        block.draw(
            on: context, x: x, y: y, red: Double(colour.red) / 255, green: Double(colour.green) / 255, blue: Double(colour.blue) / 255,
            alpha: alpha)
    }

    /// One line of text centred on a point (cairo's own text: a label, not typography).
    func text(_ text: String, centeredAt center: CanvasPoint, size: Double, colour: Color) {
        cairo_select_font_face(context, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(context, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        cairo_move_to(context, center.x - extents.width / 2 - extents.x_bearing, center.y - extents.height / 2 - extents.y_bearing)
        setSource(colour)
        cairo_show_text(context, text)
        cairo_new_path(context)
    }

    /// Draws a picture stretched over a rectangle (smooth scaling). In a PNG its edges are
    /// extended rather than faded into the background when it is enlarged; in PDF and SVG
    /// they are left to the viewer, so that cairo embeds the picture's own JPEG or PNG bytes
    /// (a padded picture would be re-encoded).
    func draw(_ picture: CairoPicture, x: Double, y: Double, width: Double, height: Double) {
        cairo_save(context)
        cairo_translate(context, x, y)
        let (stored, turned) = (Double(picture.width), Double(picture.height))
        let swaps = JPEGOrientation.swapsSides(picture.orientation)
        cairo_scale(context, width / (swaps ? turned : stored), height / (swaps ? stored : turned))
        // EXIF's eight orientations as the matrix from stored pixels to seen ones.
        let (w, h) = (stored, turned)
        var upright = cairo_matrix_t()
        switch picture.orientation {
        case 2: cairo_matrix_init(&upright, -1, 0, 0, 1, w, 0)
        case 3: cairo_matrix_init(&upright, -1, 0, 0, -1, w, h)
        case 4: cairo_matrix_init(&upright, 1, 0, 0, -1, 0, h)
        case 5: cairo_matrix_init(&upright, 0, 1, 1, 0, 0, 0)
        case 6: cairo_matrix_init(&upright, 0, 1, -1, 0, h, 0)
        case 7: cairo_matrix_init(&upright, 0, -1, -1, 0, h, w)
        case 8: cairo_matrix_init(&upright, 0, -1, 1, 0, 0, w)
        default: cairo_matrix_init_identity(&upright)
        }
        cairo_transform(context, &upright)
        cairo_set_source_surface(context, picture.surface, 0, 0)
        let pattern = cairo_get_source(context)
        cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
        cairo_pattern_set_extend(pattern, format.isVector ? CAIRO_EXTEND_NONE : CAIRO_EXTEND_PAD)
        cairo_new_path(context)
        cairo_rectangle(context, 0, 0, Double(picture.width), Double(picture.height))
        cairo_fill(context)
        cairo_restore(context)
    }

    // MARK: - The file

    /// Ends the page (a PDF's next drawing starts a new one).
    func endPage() { cairo_show_page(context) }

    /// What cairo has written of the file so far, handed over (not kept).
    /// - Throws: `RenderError.cairo` if drawing or writing failed.
    func takeWritten() throws(RenderError) -> [UInt8] {
        let drawing = cairo_status(context)
        guard drawing == CAIRO_STATUS_SUCCESS else { throw RenderError(.cairo, "drawing failed: \(Self.text(drawing))") }
        let bytes = sink.bytes
        sink.bytes = []
        return bytes
    }

    /// Ends drawing and returns the file's bytes.
    /// - Throws: `RenderError.cairo` if anything drawn or written failed.
    func finish() throws(RenderError) -> [UInt8] {
        let drawing = cairo_status(context)
        guard drawing == CAIRO_STATUS_SUCCESS else { throw RenderError(.cairo, "drawing failed: \(Self.text(drawing))") }
        if format == .png {
            let closure = Unmanaged.passUnretained(sink).toOpaque()
            let written = cairo_surface_write_to_png_stream(
                surface,
                { closure, data, length in
                    guard let closure else { return CAIRO_STATUS_WRITE_ERROR }
                    let sink = Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue()
                    if let data, length > 0 { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length))) }
                    return CAIRO_STATUS_SUCCESS
                }, closure)
            guard written == CAIRO_STATUS_SUCCESS else { throw RenderError(.cairo, "writing the PNG failed: \(Self.text(written))") }
        } else {
            cairo_surface_finish(surface)
        }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError(.cairo, "writing the \(format.rawValue) failed: \(Self.text(status))")
        }
        let bytes = sink.bytes
        sink.bytes = []
        return bytes
    }

    // MARK: - Helpers

    private func setSource(_ colour: Color) {
        cairo_set_source_rgba(
            context, Double(colour.red) / 255, Double(colour.green) / 255, Double(colour.blue) / 255, Double(colour.alpha) / 255)
    }

    private func draw(colour: Color, erasing: Bool, _ paint: (OpaquePointer) -> Void) {
        if erasing {
            cairo_save(context)
            cairo_set_operator(context, CAIRO_OPERATOR_DEST_OUT)
            cairo_set_source_rgba(context, 0, 0, 0, 1)
            paint(context)
            cairo_restore(context)
        } else {
            setSource(colour)
            paint(context)
        }
    }

    private static func cairoCap(_ cap: Brush.Cap) -> cairo_line_cap_t {
        switch cap {
        case .round: CAIRO_LINE_CAP_ROUND
        case .butt: CAIRO_LINE_CAP_BUTT
        case .square: CAIRO_LINE_CAP_SQUARE
        }
    }

    private static func cairoJoin(_ join: Brush.Join) -> cairo_line_join_t {
        switch join {
        case .round: CAIRO_LINE_JOIN_ROUND
        case .miter: CAIRO_LINE_JOIN_MITER
        case .bevel: CAIRO_LINE_JOIN_BEVEL
        }
    }

    static func text(_ status: cairo_status_t) -> String { String(cString: cairo_status_to_string(status)) }
}

/// Where cairo's stream writers put the bytes.
private final class ByteSink {
    var bytes: [UInt8] = []
}
