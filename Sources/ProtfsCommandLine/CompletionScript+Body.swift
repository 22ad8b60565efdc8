extension CompletionScript {
    /// The body both bash and zsh run: which command the words so far name, then what that
    /// command takes at the word being completed (an option, an option's value, an operand).
    static func body(_ spec: CompletionSpec, _ shell: ShellDialect) -> [String] {
        let offer = function(spec, "offer")
        var lines = ["    local command=\"\" used=0",
                     "    case \"\(shell.word(0)) \(shell.word(1))\" in"]
        let groups = spec.entries.filter { $0.words.count > 1 }.map { $0.words.joined(separator: " ") }
        if !groups.isEmpty {
            lines.append("        " + groups.map { "\"\($0)\"" }.joined(separator: "|") + ") command=\"\(shell.word(0)) \(shell.word(1))\"; used=2 ;;")
        }
        let singles = spec.entries.filter { $0.words.count == 1 }.map { $0.words[0] }
        lines.append("        *) case \"\(shell.word(0))\" in " + singles.joined(separator: "|") + ") command=\(shell.word(0)); used=1 ;; esac ;;")
        lines.append("    esac")
        lines.append("    if [ -z \"$command\" ]; then")
        lines.append("        case \(shell.count) in")
        lines.append("            0) " + shell.offerLiteral((spec.firstWords + ["completion", "help"]).joined(separator: " ")) + " ;;")
        lines.append("            1) case \(shell.word(0)) in")
        for first in spec.firstWords where !spec.secondWords(after: first).isEmpty {
            lines.append("                \(first)) " + shell.offerLiteral(spec.secondWords(after: first).joined(separator: " ")) + " ;;")
        }
        lines.append("                completion) " + shell.offerLiteral(shells.joined(separator: " ")) + " ;;")
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
                lines.append("        \"\(entry.words.joined(separator: " ")) \(option.name)\") \(offer) \(offerArguments(value)); return ;;")
            }
        }
        lines.append("    esac")
        lines.append("    if [[ $cur == -* ]]; then \(shell.offerOptions); return; fi")
        lines.append("    local n=0 skip=0 word")
        lines.append("    for word in \(shell.rest); do")
        lines.append("        if ((skip)); then skip=0; elif [[ \" $values \" == *\" $word \"* ]]; then skip=1; elif [[ $word != -* ]]; then n=$((n+1)); fi")
        lines.append("    done")
        lines.append("    \(shell.kindsDeclaration)")
        lines.append("    ((${#kinds[@]})) || return")
        lines.append("    if ((n >= ${#kinds[@]})); then ((repeats)) || return; n=$((${#kinds[@]} - 1)); fi")
        lines.append("    case \(shell.kindAtN) in")
        lines.append("        class) \(offer) \(offerArguments(.protectionClass)) ;;")
        lines.append("        *) \(offer) \(shell.kindAtN) ;;")
        lines.append("    esac")
        return lines
    }
}
