extension CompletionScript {
    static func bash(_ spec: CompletionSpec) -> String {
        let offer = function(spec, "offer"), complete = function(spec, "complete")
        var lines = ["# \(spec.tool) completion for bash, made by `\(spec.tool) completion bash` from its command table.",
                     "\(offer)() {",
                     "    case $1 in",
                     "        mountpoint) local IFS=$'\\n'; COMPREPLY=($(compgen -W \"$(\(mountsCommand) | while read -r m; do printf '%b\\n' \"$m\"; done)\" -- \"$cur\")) ;;",
                     "        words) shift; COMPREPLY=($(compgen -W \"$*\" -- \"$cur\")) ;;",
                     // A list: the words already given stay, the last one is completed.
                     "        list) shift; local given=\"\"; [[ $cur == *,* ]] && given=${cur%,*},",
                     "            compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -P \"$given\" -W \"$*\" -- \"${cur##*,}\")) ;;",
                     "        text) COMPREPLY=() ;;",
                     "        *) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")) ;;",
                     "    esac",
                     "}",
                     "\(complete)() {",
                     "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
                     "    local args=(\"${COMP_WORDS[@]:1:COMP_CWORD-1}\")"]
        lines += body(spec, .bash)
        lines.append("}")
        lines.append("complete -F \(complete) \(spec.tool)")
        return lines.joined(separator: "\n") + "\n"
    }
}
