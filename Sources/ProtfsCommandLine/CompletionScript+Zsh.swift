extension CompletionScript {
    /// A compsys function `_TOOL` in zsh's own words: autoloaded from `fpath` it completes at
    /// once; sourced, it registers itself with `compdef`.
    static func zsh(_ spec: CompletionSpec) -> String {
        let offer = function(spec, "offer"), tool = spec.tool
        var lines = ["#compdef \(tool)",
                     "# \(tool) completion for zsh, made by `\(tool) completion zsh` from its command table.",
                     "\(offer)() {",
                     "    case $1 in",
                     "        mountpoint) local -a mounts; mounts=(${(f)\"$(\(mountsCommand) | while read -r m; do printf '%b\\n' \"$m\"; done)\"})",
                     "            compadd -a mounts ;;",
                     "        words) shift; compadd -- \"$@\" ;;",
                     "        list) shift; compset -P '*,'; compadd -S '' -- \"$@\" ;;",
                     "        text) _message -r 'a value' ;;",
                     "        *) _files ;;",
                     "    esac",
                     "}",
                     "_\(tool)() {",
                     "    local cur=${words[CURRENT]} prev=${words[CURRENT-1]}",
                     "    local -a args; args=(\"${(@)words[2,CURRENT-1]}\")"]
        lines += body(spec, .zsh)
        lines.append("}")
        lines.append("if [[ ${funcstack[1]} == _\(tool) ]]; then _\(tool) \"$@\"; else compdef _\(tool) \(tool); fi")
        return lines.joined(separator: "\n") + "\n"
    }
}
