import ArgumentParser
import Dispatch
import Foundation
import StoryAPI
import StoryClient
import Synchronization

/// `storyteller preview PROJECT`: a live slideshow in the browser.
struct Preview: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a live slideshow of a project to a browser on this machine, until Ctrl-C.",
        discussion: """
            The daemon serves the page on 127.0.0.1 (a free port) behind a one-time secret in the URL; \
            this prints the URL and opens nothing itself. The boards update as you and your peers draw. \
            Ctrl-C (or the end of this command in any way) closes the preview: the port stops answering.

            Example:
              storyteller preview "Night Train"
            """)
    @Argument(help: Help.project) var project: String?
    @OptionGroup var options: ClientOptions

    func run() throws {
        let id = try Names(options).project(project)
        let response = try options.raw("POST", "/v1/projects/\(segment(id))/previews")
        guard let preview = try? API.decoder.decode(API.Preview.self, from: response.body) else {
            printError("the daemon's answer is not what this storyteller expects (are both the same version?)")
            throw ExitCode(1)
        }
        if options.json {
            print(String(decoding: response.body, as: UTF8.self))
        } else {
            print("Preview: \(preview.url)")
            print("Open it in a browser on this machine (the link is the key: keep it to yourself). Ctrl-C stops it.")
        }
        fflush(nil)
        let client = options.client
        // Ctrl-C and SIGTERM close the preview at once; were this process
        // killed outright, the daemon notices the held stream closing.
        var sources: [any DispatchSourceSignal] = []
        let stopping = StopFlag()
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                stopping.isSet.withLock { $0 = true }
                _ = try? client.request("DELETE", "/v1/previews/\(preview.id)", timeoutSeconds: 5)
                print("preview closed")
                fflush(nil)
                Foundation.exit(0)
            }
            source.resume()
            sources.append(source)
        }
        let failure: ControlClientResponse?
        do {
            failure = try client.stream("/v1/previews/\(preview.id)/hold") { _ in true }
        } catch let error as ControlClientFailure {
            printError(error.isUnreachable ? "\(error.description) (is storytellerd running?)" : error.description)
            throw ExitCode(69)
        }
        withExtendedLifetime(sources) {}
        // Our own DELETE ended the stream: the signal handler says so and exits.
        while stopping.isSet.withLock({ $0 }) { sleep(1) }
        if let failure {
            printError(UserWords.say(failure))
            throw ExitCode(1)
        }
        print("the daemon closed the preview")
    }
}

/// Set once a signal asked the preview to stop.
private final class StopFlag: Sendable {
    let isSet = Mutex(false)
}
