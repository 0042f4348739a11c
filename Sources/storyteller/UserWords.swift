import Foundation
import StoryAPI
import StoryClient

/// The daemon's and the API's errors in the words of the command line: the
/// option a person typed instead of the JSON field it became (the error's
/// `field`), and no `ops[N]:` of a request they never wrote.
enum UserWords {
    /// API fields (`APIError.field`, below the operation they are in) and the CLI's words for them.
    private static let options: [String: String] = [
        "duration": "--duration", "aspectRatio": "--aspect-ratio", "opacity": "--opacity", "background": "--background",
        "transform": "--transform", "brush.color": "--color", "brush.width": "--width", "brush.tool": "--tool",
        "brush.cap": "--cap", "brush.join": "--join", "points": "the points", "scene": "the scene", "shot": "the shot",
        "layer": "the layer", "stroke": "the stroke", "layers": "the layers", "object": "the object", "in": "--scene",
    ]

    /// The error as the CLI says it: "`--color` must be a colour like …"
    /// when it is about a field the CLI filled from an option, else the
    /// daemon's message without the operation it was in.
    static func say(_ error: APIError) -> String {
        if let field = error.field, let problem = error.problem, let option = options[field.belowOperation] {
            return "\(option) \(problem)"
        }
        var text = Substring(error.message)
        // "ops[0]: " — the CLI sent the request; the person did not.
        if text.hasPrefix("ops["), let colon = text.range(of: "]: ") { text = text[colon.upperBound...] }
        return String(text)
    }

    /// An answer that is not a success, in the CLI's words.
    static func say(_ response: ControlClient.Response) -> String {
        guard let error = try? API.decoder.decode(APIError.self, from: response.body) else {
            return "the daemon answered \(response.status)"
        }
        return say(error)
    }
}

extension String {
    /// `ops[2].brush.color` → `brush.color`.
    fileprivate var belowOperation: String {
        guard hasPrefix("ops["), let end = firstIndex(of: "]") else { return self }
        return String(self[index(after: end)...].drop { $0 == "." })
    }
}
