#ifndef STORYTELLER_CCAIRO_SHIM_H
#define STORYTELLER_CCAIRO_SHIM_H

/* cairo (PNG, SVG and PDF surfaces), pango (text shaped, wrapped and with
   font fallback, drawn through cairo) and the two decoders of the pictures it
   does not read itself: libjpeg(-turbo) and libwebp. The decoders are
   wrapped here, in C, because libjpeg reports errors by longjmp (which Swift
   cannot take) and libwebp's configuration setup is a macro-versioned inline
   function. Both write straight into a cairo image surface, scaled down while
   decoding to the size the picture is drawn at, so a large photo never
   occupies more memory than its drawn size needs. Names are prefixed so they
   never collide with the real symbols. */

#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <webp/decode.h>

/* Pango, through the part of its stable C API (pango 1.x, pangocairo) that
   StoryRender uses, declared here rather than by including <pango/pangocairo.h>:
   those headers need glib's, harfbuzz's and pango's include directories, which
   only pkg-config knows, and pango's pkg-config entry carries `-pthread`, a
   flag SwiftPM refuses (with a warning on every build). The types stay opaque;
   the module map links the libraries. */
typedef struct _PangoLayout st_PangoLayout;
typedef struct _PangoLayoutIter st_PangoLayoutIter;
typedef struct _PangoFontDescription st_PangoFontDescription;
typedef struct {
    int x, y, width, height;
} st_PangoRectangle;
enum { ST_PANGO_SCALE = 1024 };
enum { ST_PANGO_WRAP_WORD = 0, ST_PANGO_WRAP_CHAR = 1, ST_PANGO_WRAP_WORD_CHAR = 2 };
enum { ST_PANGO_ALIGN_LEFT = 0, ST_PANGO_ALIGN_CENTER = 1, ST_PANGO_ALIGN_RIGHT = 2 };
enum { ST_PANGO_WEIGHT_NORMAL = 400, ST_PANGO_WEIGHT_BOLD = 700 };
enum { ST_PANGO_STYLE_NORMAL = 0, ST_PANGO_STYLE_ITALIC = 2 };
enum { ST_PANGO_ELLIPSIZE_NONE = 0, ST_PANGO_ELLIPSIZE_END = 3 };

extern st_PangoLayout *pango_cairo_create_layout(cairo_t *cr);
extern void pango_cairo_show_layout(cairo_t *cr, st_PangoLayout *layout);
extern void pango_cairo_update_layout(cairo_t *cr, st_PangoLayout *layout);
extern void g_object_unref(void *object);
extern st_PangoFontDescription *pango_font_description_from_string(const char *text);
extern void pango_font_description_set_absolute_size(st_PangoFontDescription *description, double size);
extern void pango_font_description_set_weight(st_PangoFontDescription *description, int weight);
extern void pango_font_description_set_style(st_PangoFontDescription *description, int style);
extern void pango_font_description_free(st_PangoFontDescription *description);
extern void pango_layout_set_font_description(st_PangoLayout *layout, const st_PangoFontDescription *description);
extern void pango_layout_set_width(st_PangoLayout *layout, int width);
extern void pango_layout_set_height(st_PangoLayout *layout, int height);
extern void pango_layout_set_wrap(st_PangoLayout *layout, int wrap);
extern void pango_layout_set_ellipsize(st_PangoLayout *layout, int ellipsize);
extern void pango_layout_set_alignment(st_PangoLayout *layout, int alignment);
extern void pango_layout_set_text(st_PangoLayout *layout, const char *text, int length);
extern void pango_layout_set_markup(st_PangoLayout *layout, const char *markup, int length);
extern const char *pango_layout_get_text(st_PangoLayout *layout);
extern void pango_layout_get_extents(st_PangoLayout *layout, st_PangoRectangle *ink, st_PangoRectangle *logical);
extern int pango_layout_get_line_count(st_PangoLayout *layout);
extern int pango_layout_get_unknown_glyphs_count(st_PangoLayout *layout);
extern st_PangoLayoutIter *pango_layout_get_iter(st_PangoLayout *layout);
extern void pango_layout_iter_free(st_PangoLayoutIter *iter);
extern int pango_layout_iter_next_line(st_PangoLayoutIter *iter);
extern int pango_layout_iter_get_index(st_PangoLayoutIter *iter);
extern void pango_layout_iter_get_line_yrange(st_PangoLayoutIter *iter, int *y0, int *y1);

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ST_JCS_CAIRO_RGB24 JCS_EXT_XRGB
#define ST_WEBP_MODE_CAIRO_ARGB32 MODE_Argb
#else
#define ST_JCS_CAIRO_RGB24 JCS_EXT_BGRX
#define ST_WEBP_MODE_CAIRO_ARGB32 MODE_bgrA
#endif

/* The larger of the power-of-two reductions 1, 2, 4, 8 that keeps a
   width x height picture at least want_width x want_height (0 x 0: none). */
static inline unsigned int st_reduction(unsigned long width, unsigned long height, unsigned long want_width,
                                        unsigned long want_height) {
    unsigned int denominator = 1;
    if (want_width == 0 || want_height == 0) return 1;
    while (denominator < 8 && width / (denominator * 2) >= want_width && height / (denominator * 2) >= want_height) {
        denominator *= 2;
    }
    return denominator;
}

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} st_jpeg_error;

static inline void st_jpeg_error_exit(j_common_ptr info) {
    st_jpeg_error *error = (st_jpeg_error *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

/* libjpeg prints warnings (a truncated file it pads) on stderr by default. */
static inline void st_jpeg_quiet(j_common_ptr info) { (void)info; }

/* Decodes a JPEG into a new CAIRO_FORMAT_RGB24 image surface, reduced by 1/2,
   1/4 or 1/8 while it stays at least want_width x want_height (0 x 0: full
   size). A decoded picture over max_pixels is refused. CMYK pictures (as
   Photoshop writes them, inverted when an Adobe marker says so) are converted
   naively to RGB. *whole is set to 1 when the surface is the whole picture
   in RGB or grey (so the JPEG's own bytes can stand for it in a PDF or SVG).
   On failure: NULL, and why in message. The caller owns the surface. */
static inline cairo_surface_t *st_decode_jpeg(const unsigned char *data, unsigned long size, unsigned long want_width,
                                              unsigned long want_height, unsigned long max_pixels, int *whole,
                                              char *message, size_t message_size) {
    struct jpeg_decompress_struct info;
    st_jpeg_error error;
    *whole = 0;
    cairo_surface_t *volatile surface = NULL;
    unsigned char *volatile row = NULL;
    memset(&info, 0, sizeof info);
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = st_jpeg_error_exit;
    error.manager.output_message = st_jpeg_quiet;
    error.message[0] = 0;
    if (setjmp(error.jump)) {
        snprintf(message, message_size, "JPEG: %s", error.message);
        jpeg_destroy_decompress(&info);
        if (surface != NULL) cairo_surface_destroy(surface);
        free(row);
        return NULL;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    info.scale_num = 1;
    info.scale_denom = st_reduction(info.image_width, info.image_height, want_width, want_height);
    int cmyk = info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK;
    info.out_color_space = cmyk ? JCS_CMYK : ST_JCS_CAIRO_RGB24;
    jpeg_calc_output_dimensions(&info);
    *whole = !cmyk && info.scale_denom == 1;
    unsigned long width = info.output_width, height = info.output_height;
    if (width == 0 || height == 0 || width > 32767 || height > 32767 || width * height > max_pixels) {
        snprintf(message, message_size, "a %lu x %lu picture is over the %lu-pixel limit", width, height, max_pixels);
        jpeg_destroy_decompress(&info);
        return NULL;
    }
    surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        snprintf(message, message_size, "%s", cairo_status_to_string(cairo_surface_status(surface)));
        cairo_surface_destroy(surface);
        jpeg_destroy_decompress(&info);
        return NULL;
    }
    cairo_surface_flush(surface);
    unsigned char *pixels = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    if (cmyk) {
        row = malloc(width * 4);
        if (row == NULL) {
            snprintf(message, message_size, "out of memory");
            cairo_surface_destroy(surface);
            jpeg_destroy_decompress(&info);
            return NULL;
        }
    }
    jpeg_start_decompress(&info);
    while (info.output_scanline < info.output_height) {
        unsigned long y = info.output_scanline;
        JSAMPROW target = cmyk ? row : pixels + y * (unsigned long)stride;
        jpeg_read_scanlines(&info, &target, 1);
        if (cmyk) {
            uint32_t *out = (uint32_t *)(void *)(pixels + y * (unsigned long)stride);
            for (unsigned long x = 0; x < width; x++) {
                unsigned int c = row[4 * x], m = row[4 * x + 1], yellow = row[4 * x + 2], k = row[4 * x + 3];
                if (!info.saw_Adobe_marker) {
                    c = 255 - c; m = 255 - m; yellow = 255 - yellow; k = 255 - k;
                }
                out[x] = 0xFF000000u | (c * k / 255) << 16 | (m * k / 255) << 8 | (yellow * k / 255);
            }
        }
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    cairo_surface_mark_dirty(surface);
    return surface;
}

/* Decodes a still WebP into a new CAIRO_FORMAT_ARGB32 image surface (alpha
   premultiplied, as cairo wants it), scaled down while decoding to at least
   want_width x want_height keeping its proportions (0 x 0: full size). An
   animation, or a picture over max_pixels, is refused. On failure: NULL, and
   why in message. The caller owns the surface. */
static inline cairo_surface_t *st_decode_webp(const uint8_t *data, size_t size, unsigned long want_width,
                                              unsigned long want_height, unsigned long max_pixels, char *message,
                                              size_t message_size) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        snprintf(message, message_size, "WebP: the library is not the version built against");
        return NULL;
    }
    VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
    if (status != VP8_STATUS_OK) {
        snprintf(message, message_size, "WebP: not a picture libwebp reads (status %d)", (int)status);
        return NULL;
    }
    if (config.input.has_animation) {
        snprintf(message, message_size, "an animated WebP (only still pictures are drawn)");
        return NULL;
    }
    unsigned long width = (unsigned long)config.input.width, height = (unsigned long)config.input.height;
    if (want_width > 0 && want_height > 0 && (width > want_width && height > want_height)) {
        double scale = (double)want_width / (double)width;
        if ((double)want_height / (double)height > scale) scale = (double)want_height / (double)height;
        unsigned long scaled_width = (unsigned long)(width * scale + 0.999), scaled_height = (unsigned long)(height * scale + 0.999);
        if (scaled_width < width && scaled_height < height) {
            config.options.use_scaling = 1;
            config.options.scaled_width = (int)(scaled_width < 1 ? 1 : scaled_width);
            config.options.scaled_height = (int)(scaled_height < 1 ? 1 : scaled_height);
            width = (unsigned long)config.options.scaled_width;
            height = (unsigned long)config.options.scaled_height;
        }
    }
    if (width == 0 || height == 0 || width * height > max_pixels) {
        snprintf(message, message_size, "a %lu x %lu picture is over the %lu-pixel limit", width, height, max_pixels);
        return NULL;
    }
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)width, (int)height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        snprintf(message, message_size, "%s", cairo_status_to_string(cairo_surface_status(surface)));
        cairo_surface_destroy(surface);
        return NULL;
    }
    cairo_surface_flush(surface);
    int stride = cairo_image_surface_get_stride(surface);
    config.output.colorspace = ST_WEBP_MODE_CAIRO_ARGB32;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = cairo_image_surface_get_data(surface);
    config.output.u.RGBA.stride = stride;
    config.output.u.RGBA.size = (size_t)stride * height;
    status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    if (status != VP8_STATUS_OK) {
        snprintf(message, message_size, "WebP: the picture does not decode (status %d)", (int)status);
        cairo_surface_destroy(surface);
        return NULL;
    }
    cairo_surface_mark_dirty(surface);
    return surface;
}

#endif
