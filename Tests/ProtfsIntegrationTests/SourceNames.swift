import Foundation

/// The names the package's sources hold, as the documentation checks need them: the types
/// its Swift files declare (structs, classes, enums, protocols, actors, test suites among
/// them), every member's name (functions, properties, enum cases) whatever type holds it, and
/// every word of the Swift and C sources (a D-Bus member or a C function a doc cites is one).
struct SourceNames {
    private(set) var types: Set<String> = []
    private(set) var members: Set<String> = []
    private(set) var words: Set<String> = []

    init(files: [String], root: URL) throws {
        for file in files where file.hasSuffix(".swift") || file.hasSuffix(".c") || file.hasSuffix(".h") {
            guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else { continue }
            words.formUnion(text.matches(of: /\w+/).map { String($0.output) })
            guard file.hasSuffix(".swift") else { continue }
            types.formUnion(text.matches(of: /\b(?:struct|class|enum|protocol|actor)\s+(\w+)/).map { String($0.output.1) })
            members.formUnion(text.matches(of: /\b(?:func|case|let|var)\s+(\w+)/).map { String($0.output.1) })
            // The later names of `case a, b, c`.
            for list in text.matches(of: /\bcase\s+\w+((?:\s*,\s*\w+)+)/) {
                members.formUnion(list.output.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            }
        }
    }
}
