/// One Swift file of the code being checked: its code with comments and strings blanked,
/// and whether it imports DataProtection, which decides what `FileManager` and the
/// `setResourceValue` overload mean in it (imports are per file in Swift).
struct SourceFile {
    let path: String
    let code: SwiftCode
    /// The blanked code as one string, for the declaration searches.
    let text: String
    let importsDataProtection: Bool

    init(path: String, source: String) {
        self.path = path
        code = SwiftCode(source)
        text = String(code.characters)
        importsDataProtection = text.contains(/(?m)^\s*(@\w+\s+)*import\s+DataProtection\b/)
    }

    /// The line and column of an index of `text`.
    func position(of index: String.Index) -> (line: Int, column: Int) {
        code.position(of: text.distance(from: text.startIndex, to: index))
    }
}
