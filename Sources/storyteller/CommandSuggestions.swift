import ArgumentParser
import StoryAPI

/// "did you mean" for a mistyped command: `storyteller projets` says
/// `unknown command 'projets' (did you mean 'projects'?)` and exits 64,
/// where the argument parser only says "Unexpected argument".
enum CommandSuggestions {
    /// The message for the first word that is not a command where one is
    /// expected, or nil when the words name commands (or may be arguments).
    /// `arguments` as given, global options already moved to the end.
    static func problem(in arguments: [String]) -> String? {
        var command: any ParsableCommand.Type = Storyteller.self
        var path = ["storyteller"]
        for argument in arguments {
            guard argument != "--", !argument.hasPrefix("-") else { return nil }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { return nil }
            var names: [(String, any ParsableCommand.Type)] = []
            for subcommand in subcommands {
                names.append((subcommand._commandName, subcommand))
                for alias in subcommand.configuration.aliases { names.append((alias, subcommand)) }
            }
            if let match = names.first(where: { $0.0 == argument }) {
                command = match.1
                path.append(argument)
                continue
            }
            if path.count == 1 && argument == "help" { return nil }
            let nearest = names.map { (name: $0.0, distance: API.editDistance(argument.lowercased(), $0.0)) }
                .filter { $0.distance <= max(1, min(2, argument.count / 3)) || ($0.name.hasPrefix(argument) && argument.count >= 2) }
                .sorted { ($0.distance, $0.name) < ($1.distance, $1.name) }
            // Under a command with a default subcommand the word may be that
            // subcommand's argument (`storyteller shots "Night Train"`): only a near miss is an error.
            if command.configuration.defaultSubcommand != nil && nearest.isEmpty { return nil }
            var message = "unknown command '\(argument)' for '\(path.joined(separator: " "))'"
            if let best = nearest.first { message += " (did you mean '\(best.name)'?)" }
            message += "\ncommands: " + subcommands.map { $0._commandName }.joined(separator: ", ")
            message += "\nsee '\(path.joined(separator: " ")) --help'"
            return message
        }
        return nil
    }
}
