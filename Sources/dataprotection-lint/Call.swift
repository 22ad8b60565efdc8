/// A call in a file's blanked text: the name called, where the name starts, the text
/// between its parentheses, and what stands before it.
struct Call {
    let name: String
    let nameStart: String.Index
    /// The arguments' text, without the parentheses.
    let arguments: Substring
    /// Where the closing parenthesis is, for what follows the call (a subscript).
    let end: String.Index
    /// Whether a `.` stands before the name (a method call).
    let isMethod: Bool
    /// The receiver's text before the `.`, on the same line, without spaces.
    let receiver: Substring

    /// The arguments, split and labelled.
    var labelledArguments: [(label: Substring?, value: Substring)] { Expression.arguments(arguments).map(Expression.labelled) }

    /// The value of the argument with this label, if any.
    func argument(_ label: String) -> Substring? { labelledArguments.first { $0.label.map(String.init) == label }?.value }

    /// Every call in the file, declarations (`func name(`) left out.
    static func all(in file: SourceFile) -> [Call] {
        let text = file.text
        var calls: [Call] = []
        for match in text.matches(of: /([A-Za-z_][A-Za-z0-9_]*)\s*\(/) {
            let name = match.output.1
            let before = text[..<name.startIndex]
            if let previous = before.last, previous.isLetter || previous.isNumber || previous == "_" { continue }
            if before.hasSuffix("func ") || before.hasSuffix("init ") { continue }
            let open = text.index(before: match.range.upperBound)
            guard let close = FunctionDeclaration.closing(in: text, from: open) else { continue }
            let trimmedBefore = before.reversed().drop { $0 == " " || $0 == "\n" }
            let isMethod = trimmedBefore.first == "."
            let receiverStart = before.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
            let receiver = isMethod ? String(text[receiverStart..<name.startIndex].filter { $0 != " " }).dropLast() : Substring()
            calls.append(Call(name: String(name), nameStart: name.startIndex, arguments: text[text.index(after: open)..<close],
                              end: close, isMethod: isMethod, receiver: receiver))
        }
        return calls
    }

    /// Whether the code before the call, in the same block as far as braces tell, assigns
    /// `fileProtection` (a `URLResourceValues` being filled in).
    func assignsFileProtection(in text: String) -> Bool {
        let index = nameStart
        var depth = 0, start = index
        while start > text.startIndex {
            start = text.index(before: start)
            if text[start] == "}" { depth += 1 }
            if text[start] == "{" {
                if depth == 0 { break }
                depth -= 1
            }
        }
        return text[start..<index].contains(/\.fileProtection\s*=(?!=)/)
    }
}
