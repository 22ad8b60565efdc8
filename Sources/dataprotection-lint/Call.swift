/// A call of one of the functions the checker looks at, in blanked code: its name, where the
/// name starts, and the text between its parentheses.
struct Call {
    static let names: Set<String> = ["write", "setResourceValue", "setResourceValues", "resourceValues"]

    let name: String
    let nameOffset: Int
    /// The arguments' text, without leading spaces or newlines.
    let arguments: String
    /// Whether the code before the call, in the same function body as far as braces tell,
    /// assigns `fileProtection` (a `URLResourceValues` being filled in).
    let assignsFileProtection: Bool

    /// Whether the first argument is spelled as a `URLFileProtection` (or `FileProtectionType`)
    /// value, which the library's own `NSURL.setResourceValue` overload takes and honours.
    var passesProtectionType: Bool {
        ["URLFileProtection.", "FileProtectionType.", "."].contains { arguments.hasPrefix($0) }
    }

    static func all(in code: [Character]) -> [Call] {
        var calls: [Call] = []
        var index = 0
        while index < code.count {
            guard code[index].isLetter || code[index] == "_" else {
                index += 1
                continue
            }
            let start = index
            while index < code.count, code[index].isLetter || code[index].isNumber || code[index] == "_" { index += 1 }
            let name = String(code[start..<index])
            let precededByDot = start > 0 && code[start - 1] == "."
            guard names.contains(name), precededByDot || name == "write", index < code.count, code[index] == "(",
                  let close = closingParenthesis(in: code, from: index) else { continue }
            let arguments = String(code[(index + 1)..<close]).drop { $0 == " " || $0 == "\n" }
            calls.append(Call(name: name, nameOffset: start, arguments: String(arguments),
                              assignsFileProtection: assignsFileProtection(in: code, before: start)))
        }
        return calls
    }

    private static func closingParenthesis(in code: [Character], from open: Int) -> Int? {
        var depth = 0
        for index in open..<code.count {
            if code[index] == "(" { depth += 1 }
            if code[index] == ")" {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }

    /// Looks back to the start of the enclosing block for `.fileProtection =`.
    private static func assignsFileProtection(in code: [Character], before offset: Int) -> Bool {
        var depth = 0, start = offset
        while start > 0 {
            start -= 1
            if code[start] == "}" { depth += 1 }
            if code[start] == "{" {
                if depth == 0 { break }
                depth -= 1
            }
        }
        let text = String(code[start..<offset]).filter { $0 != " " && $0 != "\n" }
        return text.contains(".fileProtection=")
    }
}
