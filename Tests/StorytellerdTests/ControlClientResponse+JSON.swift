import Foundation
import StoryClient

extension ControlClient.Response {
    /// The body as a JSON object or array (tests look into answers by key).
    var json: Any? { try? JSONSerialization.jsonObject(with: body) }
}
