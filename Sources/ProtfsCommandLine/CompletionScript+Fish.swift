extension CompletionScript {
    static func fish(_ spec: CompletionSpec) -> String {
        let mounts = function(spec, "mounts"), list = function(spec, "list"), tool = spec.tool
        var lines = ["# \(tool) completion for fish, made by `\(tool) completion fish` from its command table.",
                     "function \(mounts)",
                     "    \(mountsCommand) | while read -l m; printf '%b\\n' $m; end",
                     "end",
                     // A list: the words already given stay, the last one is completed.
                     "function \(list)",
                     "    set -l given (string match -r '^.*,' -- (commandline -ct))",
                     "    for word in $argv; echo $given$word; end",
                     "end",
                     "complete -c \(tool) -f",
                     "complete -c \(tool) -n __fish_use_subcommand -a '\((spec.firstWords + ["completion", "help"]).joined(separator: " "))'",
                     "complete -c \(tool) -n '__fish_seen_subcommand_from completion' -a '\(shells.joined(separator: " "))'"]
        for first in spec.firstWords where !spec.secondWords(after: first).isEmpty {
            let seconds = spec.secondWords(after: first).joined(separator: " ")
            lines.append("complete -c \(tool) -n '__fish_seen_subcommand_from \(first); and not __fish_seen_subcommand_from \(seconds)' -a '\(seconds)'")
        }
        for entry in spec.entries {
            let condition = entry.words.map { "__fish_seen_subcommand_from \($0)" }.joined(separator: "; and ")
            for option in entry.options {
                let flag = option.name.hasPrefix("--") ? "-l \(option.name.dropFirst(2))" : "-s \(option.name.dropFirst())"
                var line = "complete -c \(tool) -n '\(condition)' \(flag)"
                if let value = option.value { line += " -r" + fishArguments(value, mounts: mounts, list: list) }
                lines.append(line)
            }
            if let operand = entry.operands.first {
                lines.append("complete -c \(tool) -n '\(condition)'" + fishArguments(operand, mounts: mounts, list: list))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fishArguments(_ kind: CompletionSpec.Kind, mounts: String, list: String) -> String {
        switch kind {
        case .mountpoint: " -a '(\(mounts))'"
        case .protectionClass: " -a '\(CompletionSpec.Kind.classNames.joined(separator: " "))'"
        case .accessibility: " -a '\(CompletionSpec.Kind.accessibilityNames.joined(separator: " "))'"
        case .words(let words): " -a '\(words.joined(separator: " "))'"
        case .list(let words): " -a '(\(list) \(words.joined(separator: " ")))'"
        case .file: " -F"
        case .text: " -x"
        }
    }
}
