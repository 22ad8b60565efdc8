/// `TOOL completion bash|zsh|fish`: a completion script made from the tool's command table
/// (`CompletionSpec`), so that a command or option added to the table is offered at once.
/// The live protfs mount points are read from /proc/self/mountinfo when completing.
enum CompletionScript {
    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String, _ spec: CompletionSpec) -> String? {
        switch shell {
        case "bash": bash(spec)
        // zsh runs the bash function through bashcompinit; as an autoloaded `_TOOL` it
        // completes at once too.
        case "zsh": "#compdef \(spec.tool)\nautoload -U +X bashcompinit && bashcompinit\n" + bash(spec)
            + "if [[ ${funcstack[1]} == _\(spec.tool) ]]; then _bash_complete -F \(function(spec, "complete")) \"$@\"; fi\n"
        case "fish": fish(spec)
        default: nil
        }
    }

    private static func function(_ spec: CompletionSpec, _ name: String) -> String {
        "__\(spec.tool)_\(name)"
    }

    /// The mount points of the protfs mounts: field 5 of /proc/self/mountinfo, when the type
    /// after the `-` separator is fuse.protfs (octal escapes decoded by the caller).
    private static let mountsCommand = #"awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "fuse.protfs") print $5; break } }' /proc/self/mountinfo 2>/dev/null"#

    private static func words(_ kind: CompletionSpec.Kind) -> String {
        switch kind {
        case .mountpoint: "mountpoint"
        case .protectionClass: "words " + CompletionSpec.Kind.classNames.joined(separator: " ")
        case .accessibility: "words " + CompletionSpec.Kind.accessibilityNames.joined(separator: " ")
        case .words(let list): "words " + list.joined(separator: " ")
        case .file: "file"
        case .text: "text"
        }
    }

    /// An operand's kind as the bash function names it.
    private static func operandName(_ kind: CompletionSpec.Kind) -> String {
        switch kind {
        case .mountpoint: "mountpoint"
        case .protectionClass: "class"
        default: "file"
        }
    }

    private static func bash(_ spec: CompletionSpec) -> String {
        let offer = function(spec, "offer"), complete = function(spec, "complete")
        var lines = ["# \(spec.tool) completion, made by `\(spec.tool) completion` from its command table.",
                     "\(offer)() {",
                     "    case $1 in",
                     "        mountpoint) local IFS=$'\\n'; COMPREPLY=($(compgen -W \"$(\(mountsCommand) | while read -r m; do printf '%b\\n' \"$m\"; done)\" -- \"$cur\")) ;;",
                     "        words) shift; COMPREPLY=($(compgen -W \"$*\" -- \"$cur\")) ;;",
                     "        text) COMPREPLY=() ;;",
                     "        *) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;",
                     "    esac",
                     "}",
                     "\(complete)() {",
                     "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
                     "    local words=(\"${COMP_WORDS[@]:1:COMP_CWORD-1}\") command=\"\" used=0",
                     "    case \"${words[0]-} ${words[1]-}\" in"]
        let groups = spec.entries.filter { $0.words.count > 1 }.map { $0.words.joined(separator: " ") }
        if !groups.isEmpty {
            lines.append("        " + groups.map { "\"\($0)\"" }.joined(separator: "|") + ") command=\"${words[0]} ${words[1]}\"; used=2 ;;")
        }
        let singles = spec.entries.filter { $0.words.count == 1 }.map { $0.words[0] }
        lines.append("        *) case \"${words[0]-}\" in " + singles.joined(separator: "|") + ") command=${words[0]}; used=1 ;; esac ;;")
        lines.append("    esac")
        lines.append("    if [ -z \"$command\" ]; then")
        lines.append("        case ${#words[@]} in")
        lines.append("            0) COMPREPLY=($(compgen -W \"\(spec.firstWords.joined(separator: " ")) completion help\" -- \"$cur\")) ;;")
        lines.append("            1) case ${words[0]} in")
        for first in spec.firstWords where !spec.secondWords(after: first).isEmpty {
            lines.append("                \(first)) COMPREPLY=($(compgen -W \"\(spec.secondWords(after: first).joined(separator: " "))\" -- \"$cur\")) ;;")
        }
        lines.append("                completion) COMPREPLY=($(compgen -W \"\(shells.joined(separator: " "))\" -- \"$cur\")) ;;")
        lines.append("            esac ;;")
        lines.append("        esac")
        lines.append("        return")
        lines.append("    fi")
        lines.append("    local options=\"\" values=\"\" operands=\"\" repeats=0")
        lines.append("    case $command in")
        for entry in spec.entries {
            let values = entry.options.filter { $0.value != nil }.map(\.name)
            lines.append("        \"\(entry.words.joined(separator: " "))\") options=\"\(entry.options.map(\.name).joined(separator: " "))\"; "
                         + "values=\"\(values.joined(separator: " "))\"; operands=\"\(entry.operands.map(operandName).joined(separator: " "))\"; repeats=\(entry.repeatsLast ? 1 : 0) ;;")
        }
        lines.append("    esac")
        lines.append("    case \"$command $prev\" in")
        for entry in spec.entries {
            for option in entry.options {
                guard let value = option.value else { continue }
                lines.append("        \"\(entry.words.joined(separator: " ")) \(option.name)\") \(offer) \(words(value)); return ;;")
            }
        }
        lines.append("    esac")
        lines.append("    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$options\" -- \"$cur\")); return; fi")
        lines.append("    local n=0 skip=0 word")
        lines.append("    for word in \"${words[@]:used}\"; do")
        lines.append("        if ((skip)); then skip=0; elif [[ \" $values \" == *\" $word \"* ]]; then skip=1; elif [[ $word != -* ]]; then n=$((n+1)); fi")
        lines.append("    done")
        lines.append("    local kinds=($operands)")
        lines.append("    ((${#kinds[@]})) || return")
        lines.append("    if ((n >= ${#kinds[@]})); then ((repeats)) || return; n=$((${#kinds[@]} - 1)); fi")
        lines.append("    case ${kinds[n]} in")
        lines.append("        class) \(offer) \(words(.protectionClass)) ;;")
        lines.append("        *) \(offer) ${kinds[n]} ;;")
        lines.append("    esac")
        lines.append("}")
        lines.append("complete -F \(complete) \(spec.tool)")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fish(_ spec: CompletionSpec) -> String {
        let mounts = function(spec, "mounts"), tool = spec.tool
        var lines = ["# \(tool) completion, made by `\(tool) completion` from its command table.",
                     "function \(mounts)",
                     "    \(mountsCommand) | while read -l m; printf '%b\\n' $m; end",
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
                if let value = option.value { line += " -r" + fishArguments(value, mounts: mounts) }
                lines.append(line)
            }
            if let operand = entry.operands.first {
                lines.append("complete -c \(tool) -n '\(condition)'" + fishArguments(operand, mounts: mounts))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fishArguments(_ kind: CompletionSpec.Kind, mounts: String) -> String {
        switch kind {
        case .mountpoint: " -a '(\(mounts))'"
        case .protectionClass: " -a '\(CompletionSpec.Kind.classNames.joined(separator: " "))'"
        case .accessibility: " -a '\(CompletionSpec.Kind.accessibilityNames.joined(separator: " "))'"
        case .words(let list): " -a '\(list.joined(separator: " "))'"
        case .file: " -F"
        case .text: " -x"
        }
    }
}
