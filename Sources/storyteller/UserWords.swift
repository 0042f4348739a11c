/// The daemon's and the API's messages in the words of the command line:
/// the option a person typed instead of the JSON field it became, and no
/// `ops[N]:` of a request they never wrote.
enum UserWords {
    /// API field names (as messages quote them) and the CLI options they come from.
    private static let options: [(field: String, option: String)] = [
        ("'value' of 'duration'", "--duration"), ("'value' of 'aspectRatio'", "--aspect-ratio"),
        ("'value' of 'opacity'", "--opacity"), ("'value' of 'background'", "--background"),
        ("'value' of 'transform'", "--transform"), ("'brush.color'", "--color"), ("'brush.width'", "--width"),
        ("'brush.tool'", "--tool"), ("'brush.cap'", "--cap"), ("'brush.join'", "--join"), ("'points'", "the points"),
        ("'scene'", "the scene"), ("'shot'", "the shot"), ("'layer'", "the layer"), ("'stroke'", "the stroke"),
        ("'layers'", "the layers"), ("'object'", "the object"), ("'in'", "--scene"),
    ]

    static func translate(_ message: String) -> String {
        var text = Substring(message)
        // "ops[0]: " — the CLI sent the request; the person did not.
        if text.hasPrefix("ops["), let colon = text.range(of: "]: ") { text = text[colon.upperBound...] }
        var result = String(text)
        for (field, option) in options where result.contains(field) {
            result = result.replacingOccurrences(of: field, with: option)
        }
        return result
    }
}
