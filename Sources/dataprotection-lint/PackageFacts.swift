/// What the checker resolves about names across the files it is given, as far as the text
/// tells without a compiler: which names hold writing options with protection, protection
/// values of the class's own type, attribute or resource dictionaries with a protection key,
/// and resource values with a class set. A name declared or filled in a function's body
/// means that only in that body; one declared elsewhere (at the top level, in a type, or a
/// function's name) means it in every file.
struct PackageFacts {
    enum Kind: CaseIterable {
        /// `Data.WritingOptions` with a protection bit.
        case protectingOptions
        /// Of the type `URLFileProtection` / `FileProtectionType` itself (not optional, not a
        /// raw value, not `Any`), which the library's `NSURL.setResourceValue` overload takes.
        case protectionValue
        /// `[FileAttributeKey: Any]` holding `.protectionKey`.
        case protectionAttributes
        /// `[URLResourceKey: Any]` holding `.fileProtectionKey`.
        case protectionResources
        /// `URLResourceValues` whose `fileProtection` is set.
        case protectingResourceValues
    }

    /// Where a name means something: a function body of a file, or everywhere (nil).
    struct Scope: Hashable {
        let path: String
        let body: Range<String.Index>
    }

    private var meanings: [Kind: [String: Set<Scope?>]] = [:]

    init(_ files: [SourceFile]) {
        var declarations: [(Declaration, Scope?)] = []
        for file in files {
            let bodies = FunctionDeclaration.all(in: file).map { $0.bodyStart..<$0.body.endIndex }
            func scope(of index: String.Index) -> Scope? {
                bodies.filter { $0.contains(index) }.min { $0.lowerBound > $1.lowerBound }.map { Scope(path: file.path, body: $0) }
            }
            let assignments: [(Regex<(Substring, Substring)>, Kind)] = [
                (/([A-Za-z_]\w*)\s*\[\s*(?:FileAttributeKey)?\.protectionKey\s*\]\s*=(?!=)/, .protectionAttributes),
                (/([A-Za-z_]\w*)\s*\[\s*(?:URLResourceKey)?\.fileProtectionKey\s*\]\s*=(?!=)/, .protectionResources),
                (/([A-Za-z_]\w*)\s*\.\s*fileProtection\s*=(?!=)/, .protectingResourceValues),
                (/([A-Za-z_]\w*)\s*:\s*(?:URLFileProtection|FileProtectionType)(?![\w.?!])/, .protectionValue),
            ]
            for (pattern, kind) in assignments {
                for match in file.text.matches(of: pattern) {
                    insert(kind, String(match.output.1), scope(of: match.range.lowerBound))
                }
            }
            declarations += Declaration.all(in: file).map { ($0, $0.isFunction ? nil : scope(of: $0.start)) }
        }
        // A name bound to another that means something means it too: repeat until nothing changes.
        var changed = true
        while changed {
            changed = false
            for (declaration, scope) in declarations {
                for kind in Kind.allCases where learns(kind, from: declaration) && insert(kind, declaration.name, scope) {
                    changed = true
                }
            }
        }
    }

    /// Whether one of `names`, used at `index` of `file`, means `kind` there.
    func any(_ kind: Kind, in names: Set<String>, file: SourceFile, at index: String.Index) -> Bool {
        names.contains { name in
            (meanings[kind]?[name] ?? []).contains { scope in
                scope.map { $0.path == file.path && $0.body.contains(index) } ?? true
            }
        }
    }

    /// Whether writing options spelled so, at `index` of `file`, carry a protection bit.
    func carriesProtection(_ options: Substring, file: SourceFile, at index: String.Index) -> Bool {
        Expression.spellsProtection(options) || any(.protectingOptions, in: Expression.names(in: options), file: file, at: index)
    }

    /// Every name that means `kind` somewhere, for checks that need no place.
    func names(_ kind: Kind) -> Set<String> { Set(meanings[kind]?.keys.map { $0 } ?? []) }

    @discardableResult
    private mutating func insert(_ kind: Kind, _ name: String, _ scope: Scope?) -> Bool {
        meanings[kind, default: [:]][name, default: []].insert(scope).inserted
    }

    /// Whether the declaration's value (or, for a function, its body and return type) means `kind`.
    private func learns(_ kind: Kind, from declaration: Declaration) -> Bool {
        let value = declaration.value, type = declaration.type ?? ""
        let uses = { (kind: Kind) in self.anyName(kind, in: Expression.names(in: value), for: declaration) }
        switch kind {
        case .protectingOptions:
            return (!declaration.isFunction || type.contains("WritingOptions"))
                && (Expression.spellsProtection(value) || uses(.protectingOptions))
        case .protectionValue:
            return !declaration.isFunction && (value.wholeMatch(of: /(?:URLFileProtection|FileProtectionType)\s*\.\s*\w+/) != nil
                || (type.isEmpty && names(.protectionValue).contains(String(value))))
        case .protectionAttributes:
            let dictionary = type.contains("FileAttributeKey") || value.hasPrefix("[")
            return (dictionary && value.contains(/\.protectionKey\b/)) || (!declaration.isFunction && uses(.protectionAttributes))
        case .protectionResources:
            let dictionary = type.contains("URLResourceKey") || value.hasPrefix("[")
            return (dictionary && value.contains(/\.fileProtectionKey\b/)) || (!declaration.isFunction && uses(.protectionResources))
        case .protectingResourceValues:
            return (declaration.isFunction && type.contains("URLResourceValues") && value.contains(/\.fileProtection\s*=(?!=)/))
                || (!declaration.isFunction && uses(.protectingResourceValues))
        }
    }

    private func anyName(_ kind: Kind, in names: Set<String>, for declaration: Declaration) -> Bool {
        any(kind, in: names, file: declaration.file, at: declaration.start)
    }
}

/// A `let`/`var` with its value, or a function with its body: the unit `PackageFacts` learns from.
struct Declaration {
    let file: SourceFile
    let name: String
    let start: String.Index
    /// The declared type, or a function's return type.
    let type: Substring?
    /// The value's text, or a function's body.
    let value: Substring
    let isFunction: Bool

    static func all(in file: SourceFile) -> [Declaration] {
        let text = file.text
        var found: [Declaration] = []
        for match in text.matches(of: /\b(?:let|var)\s+([A-Za-z_]\w*)\s*(?::\s*([^=\n{]+?))?\s*=(?!=)\s*/) {
            found.append(Declaration(file: file, name: String(match.output.1), start: match.range.lowerBound, type: match.output.2,
                                     value: Expression.value(in: text, from: match.range.upperBound), isFunction: false))
        }
        for function in FunctionDeclaration.all(in: file) {
            found.append(Declaration(file: file, name: function.name, start: function.bodyStart, type: function.returnType,
                                     value: function.body, isFunction: true))
        }
        return found
    }
}
