/// A function declared in a file: its name, parameters, return type and body, as the text
/// spells them.
struct FunctionDeclaration {
    struct Parameter {
        /// The argument label callers write, nil for `_`.
        let label: Substring?
        /// The name the body uses.
        let name: Substring
        let type: Substring
        let defaultValue: Substring?
    }

    let name: String
    let parameters: [Parameter]
    let returnType: Substring?
    let body: Substring
    /// Where the body starts in the file's text.
    let bodyStart: String.Index

    /// Whether the call is in this function's body.
    func encloses(_ call: Call) -> Bool { (bodyStart..<body.endIndex).contains(call.nameStart) }

    static func all(in file: SourceFile) -> [FunctionDeclaration] {
        let text = file.text
        var found: [FunctionDeclaration] = []
        for match in text.matches(of: /\bfunc\s+([A-Za-z_]\w*)\s*(?:<[^>{]*>)?\s*\(/) {
            let open = text.index(before: match.range.upperBound)
            guard let close = closing(in: text, from: open),
                  let braceOpen = text[close...].firstIndex(of: "{"),
                  let braceClose = closing(in: text, from: braceOpen) else { continue }
            let signatureTail = text[text.index(after: close)..<braceOpen]
            let returnType = signatureTail.firstMatch(of: /->\s*([^{]+)/).map { Expression.trimmed($0.output.1) }
            let parameters = Expression.arguments(text[text.index(after: open)..<close]).compactMap(parameter)
            found.append(FunctionDeclaration(name: String(match.output.1), parameters: parameters, returnType: returnType,
                                             body: text[text.index(after: braceOpen)..<braceClose], bodyStart: braceOpen))
        }
        return found
    }

    private static func parameter(_ text: Substring) -> Parameter? {
        guard let match = text.wholeMatch(of: /([A-Za-z_]\w*)(?:\s+([A-Za-z_]\w*))?\s*:\s*([^=]+?)\s*(?:=\s*(.+))?/) else { return nil }
        let first = match.output.1, second = match.output.2
        return Parameter(label: first == "_" ? nil : first, name: second ?? first, type: match.output.3,
                         defaultValue: match.output.4.map { Expression.trimmed($0) })
    }

    /// The bracket closing the one at `open` (the same kind), nil when unbalanced.
    static func closing(in text: String, from open: String.Index) -> String.Index? {
        let opening = text[open]
        let closingCharacter: Character = opening == "(" ? ")" : opening == "[" ? "]" : "}"
        var depth = 0
        var index = open
        while index < text.endIndex {
            if text[index] == opening { depth += 1 }
            if text[index] == closingCharacter {
                depth -= 1
                if depth == 0 { return index }
            }
            index = text.index(after: index)
        }
        return nil
    }
}
