import ArgumentParser
import StoryStore

/// Benchmarks of Storyteller, run in release mode (`swift run -c release storyteller-bench …`).
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyteller-bench",
        abstract: "Measure Storyteller against the benchmark traces and targets.",
        discussion: """
            Results go in docs/performance.md with the command, the machine and the date. \
            Build in release mode; debug builds are only good for checking correctness.
            """,
        subcommands: [
            GenerateCommand.self, TraceCommand.self, ResumeCommand.self, StoreCommand.self, SyncCommand.self, MicroCommand.self, DaemonCommand.self,
            HostileCommand.self, LibraryCommand.self, MediaCommand.self, ExportCommand.self,
        ]
    )

    /// The allocator as the daemon sets it (`AllocatorTuning`), so memory is measured as a daemon holds it.
    static func main() async {
        AllocatorTuning.apply()
        await main(nil)
    }
}
