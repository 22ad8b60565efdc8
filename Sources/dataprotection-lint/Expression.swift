/// What the checker reads from an expression's text: the names it uses and whether it
/// spells protection.
enum Expression {
    /// The data protection options of `Data.WritingOptions`, which Linux Foundation ignores.
    static let protectionOptions = ["completeFileProtectionUntilFirstUserAuthentication", "completeFileProtectionUnlessOpen",
                                    "completeFileProtection", "noFileProtection", "fileProtectionMask"]
    /// Apple's bits for those options (`NSDataWritingFileProtectionMask`).
    static let protectionBits: UInt64 = 0xf000_0000

    /// The identifiers the expression refers to by themselves (not as a member of something
    /// else, though `self.name` counts).
    static func names(in text: Substring) -> Set<String> {
        var names: Set<String> = []
        for match in text.matches(of: /[A-Za-z_][A-Za-z0-9_]*/) {
            let before = text[..<match.range.lowerBound]
            guard let previous = before.last else {
                names.insert(String(match.output))
                continue
            }
            if previous.isLetter || previous.isNumber || previous == "_" { continue }  // inside a literal such as 0x20
            // A member counts when it is `self`'s or a type's (`Storage.secret`), not a value's.
            if previous == "." && !before.hasSuffix("self.") && !typeName(before: before.dropLast()) { continue }
            names.insert(String(match.output))
        }
        return names.subtracting(["self"])
    }

    /// Whether writing options spelled so carry a protection bit by themselves: an option's
    /// name, or a raw value with one of Apple's protection bits.
    static func spellsProtection(_ text: Substring) -> Bool {
        if protectionOptions.contains(where: { text.contains($0) }) { return true }
        return text.matches(of: /rawValue\s*:\s*(0x[0-9A-Fa-f_]+|0b[01_]+|[0-9_]+)/).contains { match in
            integer(match.output.1).map { $0 & protectionBits != 0 } ?? false
        }
    }

    /// Whether the identifier ending the text starts with a capital, as type names do.
    private static func typeName(before text: Substring) -> Bool {
        let identifier = text.reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return identifier.last?.isUppercase ?? false
    }

    private static func integer(_ literal: Substring) -> UInt64? {
        let digits = literal.filter { $0 != "_" }
        if digits.hasPrefix("0x") { return UInt64(digits.dropFirst(2), radix: 16) }
        if digits.hasPrefix("0b") { return UInt64(digits.dropFirst(2), radix: 2) }
        return UInt64(digits)
    }

    /// The text of a declaration's value: from `start` to the end of its line, or further
    /// while brackets stay open.
    static func value(in text: String, from start: String.Index) -> Substring {
        var depth = 0
        var index = start
        while index < text.endIndex {
            let character = text[index]
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) {
                if depth == 0 { break }
                depth -= 1
            }
            if character == "\n" && depth == 0 { break }
            index = text.index(after: index)
        }
        return text[start..<index]
    }

    /// Arguments split at the commas outside brackets, each without surrounding spaces.
    static func arguments(_ text: Substring) -> [Substring] {
        var parts: [Substring] = []
        var depth = 0
        var start = text.startIndex
        for index in text.indices {
            let character = text[index]
            if "([{".contains(character) { depth += 1 }
            if ")]}".contains(character) { depth -= 1 }
            if character == "," && depth == 0 {
                parts.append(trimmed(text[start..<index]))
                start = text.index(after: index)
            }
        }
        let last = trimmed(text[start...])
        if !last.isEmpty { parts.append(last) }
        return parts
    }

    /// An argument's label and value (`label: value`), or nil label for an unlabelled one.
    static func labelled(_ argument: Substring) -> (label: Substring?, value: Substring) {
        guard let match = argument.prefixMatch(of: /([A-Za-z_][A-Za-z0-9_]*)\s*:(?!:)/) else { return (nil, argument) }
        return (match.output.1, trimmed(argument[match.range.upperBound...]))
    }

    static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
