/// `TOOL completion bash|zsh|fish`: a completion script made from the tool's command table
/// (`CompletionSpec`), so that a command or option added to the table is offered at once.
/// The live protfs mount points are read from /proc/self/mountinfo when completing.
/// bash and zsh share one body (`CompletionScript+Body`), written in each shell's own words
/// (`ShellDialect`); fish declares its completions instead.
enum CompletionScript {
    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String, _ spec: CompletionSpec) -> String? {
        switch shell {
        case "bash": bash(spec)
        case "zsh": zsh(spec)
        case "fish": fish(spec)
        default: nil
        }
    }

    static func function(_ spec: CompletionSpec, _ name: String) -> String {
        "__\(spec.tool)_\(name)"
    }

    /// The mount points of the protfs mounts: field 5 of /proc/self/mountinfo, when the type
    /// after the `-` separator is fuse.protfs (octal escapes decoded by the caller).
    static let mountsCommand = #"awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "fuse.protfs") print $5; break } }' /proc/self/mountinfo 2>/dev/null"#

    /// The arguments of the offer function for a value of this kind.
    static func offerArguments(_ kind: CompletionSpec.Kind) -> String {
        switch kind {
        case .mountpoint: "mountpoint"
        case .protectionClass: "words " + CompletionSpec.Kind.classNames.joined(separator: " ")
        case .accessibility: "words " + CompletionSpec.Kind.accessibilityNames.joined(separator: " ")
        case .words(let list): "words " + list.joined(separator: " ")
        case .list(let list): "list " + list.joined(separator: " ")
        case .file: "file"
        case .text: "text"
        }
    }

    /// An operand's kind as the generated functions name it.
    static func operandName(_ kind: CompletionSpec.Kind) -> String {
        switch kind {
        case .mountpoint: "mountpoint"
        case .protectionClass: "class"
        default: "file"
        }
    }
}
