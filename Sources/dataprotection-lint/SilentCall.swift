/// A call that compiles on Linux, returns success and sets (or reads) no protection class:
/// the file and line to change, and what to write instead.
struct SilentCall: Equatable {
    let path: String
    let line: Int
    let column: Int
    let replacement: String

    /// The line in the compiler's format, which editors and build logs show as a warning.
    var diagnostic: String { "\(path):\(line):\(column): warning: \(replacement)" }

    /// Every such call in the files (the Swift files of one module, or more), by file and
    /// position, each once.
    static func find(in files: [SourceFile]) -> [SilentCall] {
        let facts = PackageFacts(files)
        let calls = files.map(Call.all(in:))
        var found: [SilentCall] = []
        for (file, fileCalls) in zip(files, calls) {
            let checks = CallChecks(file: file, facts: facts, moduleImportsDataProtection: files.contains(where: \.importsDataProtection))
            for call in fileCalls {
                guard let replacement = checks.replacement(for: call) else { continue }
                found.append(SilentCall(file, at: call.nameStart, replacement))
            }
        }
        found += WriteHelpers(files: files, calls: calls, facts: facts).silentWrites()
        var seen: Set<String> = []
        return found.filter { seen.insert("\($0.path):\($0.line):\($0.column)").inserted }
            .sorted { ($0.path, $0.line, $0.column) < ($1.path, $1.line, $1.column) }
    }

    /// One file's calls, read alone.
    static func find(in source: String, path: String = "") -> [SilentCall] {
        find(in: [SourceFile(path: path, source: source)])
    }

    init(_ file: SourceFile, at index: String.Index, _ replacement: String) {
        let (line, column) = file.position(of: index)
        self.init(path: file.path, line: line, column: column, replacement: replacement)
    }

    init(path: String, line: Int, column: Int, replacement: String) {
        self.path = path
        self.line = line
        self.column = column
        self.replacement = replacement
    }
}
