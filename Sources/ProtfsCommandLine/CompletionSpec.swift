import ProtfsDomain

/// What a shell may offer for each command of a table, read from the commands themselves:
/// their options, and the placeholders of their synopses (`MOUNTPOINT`: the live protfs
/// mounts, unless it follows `BACKING`; `CLASS`: the class names and their aliases;
/// `--accessible V`: the accessibilities; `a|b`: those words; `PATH`, `FILE`, `F`,
/// `ARCHIVE`: files; any other placeholder of an option's value is free text). An option
/// that the synopsis does not show is internal, and never offered.
struct CompletionSpec {
    enum Kind: Equatable {
        case mountpoint, protectionClass, accessibility, file
        /// Free text (a service, a uid): nothing to offer.
        case text
        case words([String])
        /// A comma-separated list of these words (`-o OPTIONS`).
        case list([String])

        static let classNames = ProtectionClass.allCases.flatMap { [$0.name, $0.appleName, $0.letter] }
        static let accessibilityNames = ItemAccessibility.allCases.flatMap { [$0.name, $0.appleName] }
    }

    struct Entry {
        let words: [String]
        /// Every option the synopsis shows, with the kind of its value (nil: a flag).
        let options: [(name: String, value: Kind?)]
        let operands: [Kind]
        /// The last operand repeats (`PATH...`).
        let repeatsLast: Bool
    }

    let tool: String
    let entries: [Entry]

    init(_ table: CommandTable) {
        tool = table.tool
        entries = table.commands.map(Self.entry)
    }

    private static func entry(_ command: Command) -> Entry {
        let tokens = command.synopsis.split(separator: " ").map { String($0).filter { !"[]".contains($0) } }.filter { !$0.isEmpty }
        let shown = command.valueOptions.union(command.flags).filter { option in
            command.synopsis.split(whereSeparator: { " []|".contains($0) }).contains { $0 == option }
        }
        let options = shown.sorted().map { option -> (String, Kind?) in
            guard command.valueOptions.contains(option) else { return (option, nil) }
            let placeholder = tokens.firstIndex(of: option).flatMap { $0 + 1 < tokens.count ? tokens[$0 + 1] : nil } ?? ""
            if let list = command.valueLists[option] { return (option, .list(list)) }
            return (option, valueKind(of: option, placeholder: placeholder))
        }
        // The operands: the placeholders outside brackets, before any alternative form
        // (`| --verify ARCHIVE`), that no option takes.
        var operands: [Kind] = []
        var repeatsLast = false
        var depth = 0
        var previous = ""
        for token in command.synopsis.split(separator: " ").map(String.init) {
            if token == "|" && depth == 0 { break }
            let bare = token.filter { !"[]".contains($0) }
            let outside = depth == 0 && !token.hasPrefix("[")
            depth += token.filter { $0 == "[" }.count - token.filter { $0 == "]" }.count
            defer { previous = bare }
            guard outside, bare.first?.isUppercase == true, !command.valueOptions.contains(previous) else { continue }
            repeatsLast = bare.hasSuffix("...")
            let name = repeatsLast ? String(bare.dropLast(3)) : bare
            // `BACKING MOUNTPOINT` is a mount to make: any directory, not a live mount.
            let live = name == "MOUNTPOINT" && !command.synopsis.hasPrefix("BACKING MOUNTPOINT")
            operands.append(live ? .mountpoint : name == "CLASS" ? .protectionClass : .file)
        }
        return Entry(words: command.words, options: options, operands: operands, repeatsLast: repeatsLast)
    }

    private static func valueKind(of option: String, placeholder: String) -> Kind {
        if option == "--accessible" { return .accessibility }
        if placeholder == "CLASS" { return .protectionClass }
        if placeholder.contains("|") { return .words(placeholder.split(separator: "|").map(String.init)) }
        return ["PATH", "FILE", "F", "ARCHIVE"].contains(placeholder) ? .file : .text
    }

    /// The first words of the commands, then for each group its second words.
    var firstWords: [String] { unique(entries.map { $0.words[0] }) }

    func secondWords(after first: String) -> [String] {
        unique(entries.filter { $0.words.count > 1 && $0.words[0] == first }.map { $0.words[1] })
    }

    private func unique(_ words: [String]) -> [String] {
        var seen: Set<String> = []
        return words.filter { seen.insert($0).inserted }
    }
}
