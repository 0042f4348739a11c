import Foundation
import StoryAPI
import StoryCore
import Testing

/// Edits decode into typed operations; every malformed request is refused
/// with the field it is about named, before anything is applied.
@Suite struct EditDecodingTests {
    static let layer = "3@00000000000000aa"

    func message(_ json: String) -> String? {
        do {
            _ = try API.decode(API.EditRequest.self, from: Data(json.utf8))
            return nil
        } catch {
            #expect(error.code == .badRequest)
            return error.message
        }
    }

    @Test(arguments: [
        // (request, words the message must contain)
        (#"{"ops":[]}"#, ["'ops'", "non-empty"]),
        (#"{"session":"s"}"#, ["missing field 'ops'"]),
        (#"[1,2]"#, ["JSON object"]),
        (#"{"ops":[{"op":"fly"}]}"#, ["ops[0]", "'op'", "unknown op", "scene.add"]),
        (#"{"ops":[{"at":1}]}"#, ["ops[0]", "missing field 'op'"]),
        (#"{"ops":[{"op":"scene.add","at":-1}]}"#, ["ops[0]", "'at'", "non-negative"]),
        (#"{"ops":[{"op":"scene.add","at":"first"}]}"#, ["ops[0]", "'at'", "non-negative integer"]),
        (#"{"ops":[{"op":"scene.add","title":7}]}"#, ["ops[0]", "'title'", "string"]),
        (#"{"ops":[{"op":"scene.add"},{"op":"shot.add"}]}"#, ["ops[1]", "missing field 'scene'"]),
        (#"{"ops":[{"op":"shot.add","scene":"$3"}]}"#, ["ops[0]", "'scene'", "earlier operation"]),
        (#"{"ops":[{"op":"shot.add","scene":"nowhere"}]}"#, ["ops[0]", "'scene'", "not an object id"]),
        (#"{"ops":[{"op":"move","object":"$0","to":1}]}"#, ["ops[0]", "'object'", "earlier operation"]),
        (#"{"ops":[{"op":"scene.add"},{"op":"move","object":"$0"}]}"#, ["ops[1]", "missing field 'to'"]),
        (#"{"ops":[{"op":"set","field":"colour","value":1}]}"#, ["ops[0]", "'field'", "caption"]),
        (#"{"ops":[{"op":"set","field":"visible","value":1}]}"#, ["ops[0]", "'value'", "true or false"]),
        (#"{"ops":[{"op":"set","field":"duration","value":"long"}]}"#, ["ops[0]", "'value'", "number"]),
        (#"{"ops":[{"op":"set","field":"background","value":"blue"}]}"#, ["ops[0]", "'value'", "colour"]),
        (#"{"ops":[{"op":"set","field":"transform","value":[1,0,0]}]}"#, ["ops[0]", "'value'", "[a, b, c, d, tx, ty]"]),
        (#"{"ops":[{"op":"set","field":"caption"}]}"#, ["ops[0]", "missing field 'value'"]),
        (#"{"ops":[{"op":"set","field":"duration","value":-3}]}"#, ["ops[0]", "'value'", "0 to 86400 seconds"]),
        (#"{"ops":[{"op":"set","field":"aspectRatio","value":0}]}"#, ["ops[0]", "'value'", "above 0 and at most 100"]),
        (#"{"ops":[{"op":"set","field":"opacity","value":1.5}]}"#, ["ops[0]", "'value'", "0 to 1"]),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,2]}]}"#, ["ops[0]", "'points'", "pressure must be within 0 to 1"]),
        (
            #"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1, 1.5,0.5,1]}]}"#,
            ["ops[0]", "point 2 at x 1.5", "within 0 to 1"]
        ),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,-0.1,1]}]}"#, ["ops[0]", "point 1 at x 0.0, y -0.1"]),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0]}]}"#, ["ops[0]", "'points'", "multiple of 3"]),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,"x",1]}]}"#, ["ops[0]", "'points'", "numbers"]),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa"}]}"#, ["ops[0]", "missing field 'points'"]),
        (#"{"ops":[{"op":"tag.add"}]}"#, ["ops[0]", "missing field 'tag'"]),
        (#"{"ops":[{"op":"tag.add","tag":"  "}]}"#, ["ops[0]", "'tag'", "must not be empty"]),
        (#"{"ops":[{"op":"tag.remove","tag":"a\nb"}]}"#, ["ops[0]", "'tag'", "control characters"]),
        (#"{"ops":[{"op":"tag.add","tag":"\#(String(repeating: "x", count: 65))"}]}"#, ["ops[0]", "'tag'", "65 bytes, at most 64"]),
        (#"{"ops":[{"op":"tag.add","tag":7}]}"#, ["ops[0]", "'tag'", "string"]),
        (#"{"ops":[{"op":"tag.add","object":"nowhere","tag":"x"}]}"#, ["ops[0]", "'object'", "not an object id"]),
        (
            #"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"color":"blue"}}]}"#,
            ["ops[0]", "'brush.color'", "colour"]
        ),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"width":2}}]}"#, ["ops[0]", "'brush.width'", "0...1"]),
        (
            #"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"tool":"crayon"}}]}"#,
            ["ops[0]", "'brush.tool'", "pencil"]
        ),
        (
            #"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"cap":"pointy"}}]}"#,
            ["ops[0]", "'brush.cap'", "round"]
        ),
        (
            #"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"size":1}}]}"#,
            ["ops[0]", "'brush.size'", "not a brush field"]
        ),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":"red"}]}"#, ["ops[0]", "'brush'", "object"]),
        (#"{"ops":[{"op":"stroke.replace","layer":"3@00000000000000aa","stroke":"4@00000000000000aa"}]}"#, ["ops[0]", "'brush'", "restore"]),
        (
            #"{"ops":[{"op":"stroke.replace","layer":"3@00000000000000aa","stroke":"4@00000000000000aa","restore":"yes"}]}"#,
            ["ops[0]", "'restore'", "true or false"]
        ),
        (#"{"ops":[{"op":"layers.group","layers":[]}]}"#, ["ops[0]", "'layers'", "non-empty"]),
        (#"{"ops":[{"op":"scene.add"}],"session":""}"#, ["'session'", "1 to 64 bytes"]),
        (#"{"ops":[{"op":"scene.add"}],"session":5}"#, ["'session'", "string"]),
    ])
    func eachWrongFieldIsNamed(request: String, words: [String]) throws {
        let text = try #require(message(request), "\(request) decoded")
        for word in words { #expect(text.contains(word), "\(request): \(text)") }
    }

    /// The field is also given apart from the sentence (`APIError.field`,
    /// `problem`), so a client can name it its own way (the CLI's `--color`).
    @Test(arguments: [
        (#"{"ops":[{"op":"set","field":"duration","value":"long"}]}"#, "ops[0].duration", "takes a number"),
        (#"{"ops":[{"op":"scene.add"},{"op":"set","field":"background","value":"blue"}]}"#, "ops[1].background", "takes a colour"),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,1],"brush":{"color":"blue"}}]}"#, "ops[0].brush.color", "must be"),
        (#"{"ops":[{"op":"stroke.add","layer":"3@00000000000000aa","points":[0,0,2]}]}"#, "ops[0].points", "has point 1 with pressure 2.0"),
        (#"{"ops":[{"op":"scene.add","at":-1}]}"#, "ops[0].at", "must be a non-negative integer"),
        (#"{"session":"s"}"#, "ops", "is missing"),
    ])
    func theFieldAndTheProblemComeApart(request: String, field: String, problem: String) throws {
        do {
            _ = try API.decode(API.EditRequest.self, from: Data(request.utf8))
            Issue.record("\(request) decoded")
        } catch {
            #expect(error.field == field, "\(request): \(error.message)")
            let said = try #require(error.problem)
            #expect(said.hasPrefix(problem), "\(request): \(said)")
            #expect(!said.contains("'\(field)'") && !said.hasPrefix("of '"), "the problem does not name the field again: \(said)")
            // The wire form carries both, and an error without a field has neither.
            let json = String(decoding: try API.encoder.encode(error), as: UTF8.self)
            #expect(json.contains(#""field":"\#(field)""#), "\(json)")
            let plain = String(decoding: try API.encoder.encode(APIError(.notFound, "no project")), as: UTF8.self)
            #expect(plain == #"{"error":{"code":"not_found","message":"no project"}}"#)
        }
    }

    @Test func aValidRequestDecodesIntoTypedOperations() throws {
        let json = """
            {"session":"sketch","ops":[
              {"op":"scene.add","title":"Harbour","at":0},
              {"op":"shot.add","scene":"$0"},
              {"op":"layer.add","shot":"$1","name":"Ink"},
              {"op":"stroke.add","layer":"$2","points":[0.1,0.2,0.5,0.3,0.4,1],"brush":{"tool":"pencil","color":"#ff000080","width":0.01,"cap":"square","join":"bevel"}},
              {"op":"set","object":"$1","field":"duration","value":2.5},
              {"op":"set","field":"title","value":null},
              {"op":"stroke.replace","layer":"$2","stroke":"$3","restore":true,"brush":{"width":0.02},"transform":[1,0,0,1,0.1,0]},
              {"op":"move","object":"$1","to":0,"in":"$0"}
            ]}
            """
        let request = try API.decode(API.EditRequest.self, from: Data(json.utf8))
        #expect(request.session == "sketch")
        #expect(request.ops.count == 8)
        #expect(request.ops[0] == .addScene(at: 0, title: "Harbour"))
        #expect(request.ops[1] == .addShot(scene: .created(0), at: nil))
        guard case .addStroke(.created(2), let brush, let points) = request.ops[3] else {
            Issue.record("not a stroke: \(request.ops[3])")
            return
        }
        #expect(brush == Brush(tool: .pencil, color: Color(rgba: 0xFF00_0080), width: 0.01, cap: .square, join: .bevel))
        #expect(points == [Point(x: 0.1, y: 0.2, pressure: 0.5), Point(x: 0.3, y: 0.4, pressure: 1)])
        #expect(request.ops[4] == .set(.created(1), .duration, .number(2.5)))
        #expect(request.ops[5] == .set(.id(.root), .title, .null))
        #expect(
            request.ops[6]
                == .replaceStroke(
                    layer: .created(2), stroke: .created(3), restore: true, brush: API.BrushPatch(width: 0.02),
                    transform: Affine(a: 1, b: 0, c: 0, d: 1, tx: 0.1, ty: 0)))
        #expect(request.ops[7] == .move(.created(1), to: 0, in: .created(0)))
    }

    /// What the CLI encodes, the daemon decodes to the same operations.
    @Test func operationsRoundTripThroughJSON() throws {
        let layer = try #require(OpID(Self.layer))
        let request = API.EditRequest(
            ops: [
                .addScene(at: nil, title: "One"), .addShot(scene: .created(0), at: 2), .addLayer(shot: .created(1), at: nil, name: "Ink"),
                .move(.id(layer), to: 1, in: nil), .delete(.id(layer)), .restore(.id(layer)),
                .set(.id(layer), .opacity, .number(0.5)), .set(.id(layer), .visible, .bool(false)),
                .set(.id(layer), .background, .color(Color(rgba: 0x1E90_FFFF))), .set(.id(layer), .group, .null),
                .set(.id(layer), .transform, .transform(Affine(a: 2, b: 0, c: 0, d: 2, tx: 0, ty: 0))),
                .duplicateShot(.created(1), at: nil),
                .addStroke(layer: .id(layer), brush: Brush(), points: [Point(x: 0.5, y: 0.5, pressure: 1)]),
                .eraseStroke(layer: .id(layer), stroke: .id(layer)),
                .replaceStroke(layer: .id(layer), stroke: .id(layer), restore: false, brush: API.BrushPatch(color: .black), transform: nil),
                .group([.id(layer)]), .ungroup([.id(layer)]),
                .addTag(.id(.root), tag: "client review"), .removeTag(.created(1), tag: "Night"),
            ], session: "s")
        let decoded = try API.decode(API.EditRequest.self, from: try API.encoder.encode(request))
        #expect(decoded.ops == request.ops)
        #expect(decoded.session == "s")
    }
}
