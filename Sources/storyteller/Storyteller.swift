import ArgumentParser
import Foundation
import StoryAPI
import StoryClient
import StoryCore

/// `storyteller`: the command line of the Storyteller daemon, over its control socket.
@main
struct Storyteller: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyteller",
        abstract: "Control the local Storyteller daemon (storytellerd).",
        discussion: """
            Exit codes: 0 success, 1 the daemon refused the request (its message is \
            printed), 64 bad arguments, 69 the daemon is not running or not reachable.
            """,
        version: "storyteller \(API.version)",
        subcommands: [
            Status.self, Version.self, ID.self, Use.self, Peers.self, Share.self, Unshare.self, Shares.self, Tree.self, Folders.self, Projects.self,
            Scenes.self, Shots.self,
            Tags.self, Layers.self, Strokes.self, Images.self, Sound.self, Media.self, Undo.self, Redo.self, Search.self, History.self, Versions.self,
            Diff.self, RestoreVersion.self, Conflicts.self, Render.self, Replay.self, Export.self, Import.self, Preview.self, Watch.self, Backup.self,
            Demo.self,
        ])
}

extension Storyteller {
    /// Runs the command line with the global options moved where the
    /// commands declare them, so they work before the subcommand too.
    static func main() {
        let arguments = GlobalOptions.movedToTheEnd(Array(CommandLine.arguments.dropFirst()))
        if let problem = CommandSuggestions.problem(in: arguments) {
            printError(problem)
            Foundation.exit(64)
        }
        main(arguments)
    }
}

/// `--socket PATH` and `--json` may be given anywhere (`storyteller --json
/// status`, `storyteller peers --socket S list`): every command that talks to
/// the daemon declares them, so they are moved after the subcommand's own
/// arguments (before a `--`, after which everything is an argument).
enum GlobalOptions {
    static func movedToTheEnd(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var kept: [String] = []
        var moved: [String] = []
        var index = arguments.startIndex
        while index < end {
            let argument = arguments[index]
            if argument == "--json" || argument.hasPrefix("--socket=") {
                moved.append(argument)
            } else if argument == "--socket", index + 1 < end {
                moved += [argument, arguments[index + 1]]
                index += 1
            } else {
                kept.append(argument)
            }
            index += 1
        }
        return kept + moved + arguments[end...]
    }
}

/// Options every command takes.
struct ClientOptions: ParsableArguments {
    @Option(
        help: "The daemon's control socket (default: your daemon's, else the system daemon's /run/storyteller/control.sock; also STORYTELLER_SOCKET)."
    )
    var socket: String?

    @Flag(help: "Print the daemon's JSON answer instead of text.")
    var json = false

    var client: ControlClient {
        let environment = ProcessInfo.processInfo.environment
        if let given = socket ?? environment["STORYTELLER_SOCKET"] { return ControlClient(path: given) }
        return ControlClient.locate(environment: environment)
    }

    /// Sends a request and decodes the answer as one of the API's types
    /// (printing the JSON as it came with `--json`).
    func call<Answer: Decodable>(_ answer: Answer.Type, _ method: String, _ target: String, timeoutSeconds: Int = 30) throws -> Answer {
        try decoded(answer, raw(method, target, body: nil as Data?, timeoutSeconds: timeoutSeconds), target)
    }

    /// Sends one of the API's request types and decodes the answer.
    func call<Answer: Decodable, Body: Encodable>(
        _ answer: Answer.Type, _ method: String, _ target: String, body: Body, timeoutSeconds: Int = 30
    ) throws -> Answer {
        try decoded(answer, raw(method, target, body: try API.encoder.encode(body), timeoutSeconds: timeoutSeconds), target)
    }

    private func decoded<Answer: Decodable>(_ answer: Answer.Type, _ response: ControlClientResponse, _ target: String) throws -> Answer {
        if json { print(String(decoding: response.body, as: UTF8.self)) }
        do {
            return try API.decoder.decode(answer, from: response.body)
        } catch {
            printError("the daemon's answer to \(target) is not what this storyteller expects (are both the same version?): \(error)")
            throw ExitCode(1)
        }
    }

    /// Sends a request with an encoded body (the API's types); the successful
    /// response, or exits with a clear message (`reword` may give the
    /// command's own words for an error code).
    func raw(
        _ method: String, _ target: String, body data: Data? = nil, timeoutSeconds: Int = 30,
        reword: (_ code: String, _ message: String) -> String? = { _, _ in nil }
    ) throws -> ControlClientResponse {
        let response: ControlClient.Response
        do {
            response = try client.request(method, target, body: data, timeoutSeconds: timeoutSeconds)
        } catch let failure as ControlClient.Failure {
            printError(failure.isUnreachable ? "\(failure.description) (is storytellerd running?)" : failure.description)
            throw ExitCode(69)
        }
        guard (200..<300).contains(response.status) else {
            if let code = response.errorCode, let message = response.errorMessage, let words = reword(code, message) {
                printError(words)
            } else {
                printError(UserWords.say(response))
            }
            throw ExitCode(1)
        }
        return response
    }
}
