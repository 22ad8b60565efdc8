import Foundation

/// Which folders of the vault core use which: the compiler sees `ProtfsCore` as one target,
/// so this parse stands in for the boundary a target would draw. A folder uses another when
/// one of its Swift files names a type (struct, class, enum, protocol, actor, typealias)
/// declared at the top level of a file of the other, comments and string literals left out.
/// Files directly in `Sources/ProtfsCore` belong to the folder ".".
struct CoreFolderGraph {
    /// Where a use was seen: the type and the file naming it.
    struct Use: Hashable, Comparable, CustomStringConvertible {
        let type: String
        let file: String

        static func < (a: Use, b: Use) -> Bool { (a.type, a.file) < (b.type, b.file) }
        var description: String { "\(type) in \(file)" }
    }

    /// folder -> folder it uses -> the uses.
    private(set) var edges: [String: [String: Set<Use>]] = [:]
    private(set) var folders: Set<String> = []
    /// type -> the folder declaring it.
    private(set) var declarations: [String: String] = [:]

    init(root: URL) throws {
        let paths = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }.sorted()
        var code: [(folder: String, file: String, text: String)] = []
        for path in paths {
            let components = path.split(separator: "/")
            let folder = components.count > 1 ? String(components[0]) : "."
            let text = Self.code(of: try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
            code.append((folder, path, text))
            folders.insert(folder)
        }
        // Top-level declarations only (no indentation); a private one is its file's alone.
        let declaration = /(?m)^(?:@\w+(?:\([^)\n]*\))?\s+)*(?:(?:public|package|internal)\s+)?(?:(?:final|indirect)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)/
        for (folder, _, text) in code {
            for match in text.matches(of: declaration) { declarations[String(match.output.1)] = folder }
        }
        for (folder, file, text) in code {
            for match in text.matches(of: /\b[A-Z]\w*/) {
                let type = String(match.output)
                guard let declaringFolder = declarations[type], declaringFolder != folder else { continue }
                edges[folder, default: [:]][declaringFolder, default: []].insert(Use(type: type, file: file))
            }
        }
    }

    /// A path of folders that leads back to its start, if there is one.
    func cycle() -> [String]? {
        var finished: Set<String> = []
        func visit(_ folder: String, path: [String]) -> [String]? {
            if let start = path.firstIndex(of: folder) { return Array(path[start...]) + [folder] }
            guard !finished.contains(folder) else { return nil }
            for next in (edges[folder] ?? [:]).keys.sorted() {
                if let found = visit(next, path: path + [folder]) { return found }
            }
            finished.insert(folder)
            return nil
        }
        for folder in folders.sorted() {
            if let found = visit(folder, path: []) { return found }
        }
        return nil
    }

    /// `text` with its comments and the contents of its string literals blanked, an
    /// interpolation's code kept.
    static func code(of text: String) -> String {
        enum Mode { case code, lineComment, blockComment, string }
        var out = ""
        var modes: [Mode] = [.code]
        // Per interpolation open in a string: the parentheses open inside it.
        var parentheses: [Int] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            switch modes.last! {
            case .code:
                if character == "/" && next == "/" { modes.append(.lineComment); index += 1 }
                else if character == "/" && next == "*" { modes.append(.blockComment); index += 1 }
                else if character == "\"" { modes.append(.string) }
                else if character == "(" && !parentheses.isEmpty { parentheses[parentheses.count - 1] += 1; out.append(character) }
                else if character == ")" && parentheses.last == 0 { parentheses.removeLast(); modes.removeLast() }
                else {
                    if character == ")" && !parentheses.isEmpty { parentheses[parentheses.count - 1] -= 1 }
                    out.append(character)
                }
            case .lineComment:
                if character == "\n" { modes.removeLast(); out.append(character) }
            case .blockComment:
                if character == "*" && next == "/" { modes.removeLast(); index += 1 }
                else if character == "/" && next == "*" { modes.append(.blockComment); index += 1 }
            case .string:
                if character == "\\" && next == "(" { modes.append(.code); parentheses.append(0); out.append(" "); index += 1 }
                else if character == "\\" { index += 1 }
                else if character == "\"" || character == "\n" { modes.removeLast(); out.append(" ") }
            }
            index += 1
        }
        return out
    }
}
