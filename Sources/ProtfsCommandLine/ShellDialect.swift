/// How bash and zsh spell what the shared completion body needs: bash's arrays count from
/// 0 and its answers go into `COMPREPLY`; zsh's count from 1 and its answers go through
/// `compadd`. `args` holds the words between the tool's name and the word being completed,
/// `cur` that word.
struct ShellDialect {
    /// The Nth word of `args` (0-based) or empty.
    let word: @Sendable (Int) -> String
    let count: String
    /// The words of `args` after the first `$used`, quoted as a list.
    let rest: String
    /// Declares `kinds` as the words of `$operands`.
    let kindsDeclaration: String
    /// The operand kind at 0-based index `$n`.
    let kindAtN: String
    /// Offers the literal words given, filtered by `$cur`.
    let offerLiteral: @Sendable (String) -> String
    /// Offers the words of the variable `$options`.
    let offerOptions: String

    static let bash = ShellDialect(
        word: { "${args[\($0)]-}" }, count: "${#args[@]}", rest: "\"${args[@]:used}\"",
        kindsDeclaration: "local kinds=($operands)", kindAtN: "${kinds[n]}",
        offerLiteral: { "COMPREPLY=($(compgen -W \"\($0)\" -- \"$cur\"))" },
        offerOptions: "COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))")

    static let zsh = ShellDialect(
        word: { "${args[\($0 + 1)]-}" }, count: "${#args}", rest: "\"${(@)args[used+1,-1]}\"",
        kindsDeclaration: "local -a kinds; kinds=(${=operands})", kindAtN: "${kinds[n+1]}",
        offerLiteral: { "compadd -- \($0)" },
        offerOptions: "compadd -- ${=options}")
}
