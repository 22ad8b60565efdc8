/// The checks of one call against what the package's names resolve to: each returns the
/// replacement to report, nil when the call protects (or has nothing to do with protection).
struct CallChecks {
    let file: SourceFile
    let facts: PackageFacts
    /// Whether any file of the module imports DataProtection (so that its program means to protect).
    let moduleImportsDataProtection: Bool

    static let writeReplacement = "Data.write(to:options:) ignores the file protection options on Linux; "
        + "with import DataProtection write `try data.writeProtected(to: url, options: ...)`"
    static let nsDataWriteReplacement = "NSData.write(toFile:options:) ignores the file protection options on Linux; "
        + "with import DataProtection write `try Data(referencing: data).writeProtected(to: URL(fileURLWithPath: path), options: ...)`"
    static let setClassReplacement = "with import DataProtection write `try url.setFileProtection(.complete)` (the class you set)"

    func replacement(for call: Call) -> String? {
        switch call.name {
        case "write": return write(call)
        case "setResourceValue" where call.isMethod: return setResourceValue(call)
        case "setResourceValues" where call.isMethod: return setResourceValues(call)
        case "resourceValues" where call.isMethod && call.arguments.contains("fileProtectionKey"):
            return "resourceValues(forKeys: [.fileProtectionKey]) returns no class on Linux; "
                + "with import DataProtection read `try url.fileProtection`"
        case "createFile", "setAttributes", "createDirectory": return fileManagerAttributes(call)
        case "attributesOfItem" where call.isMethod: return attributesRead(call)
        case "copyItem" where call.isMethod: return copy(call)
        default: return nil
        }
    }

    private func write(_ call: Call) -> String? {
        guard let options = call.argument("options"),
              facts.carriesProtection(options, file: file, at: call.nameStart) else { return nil }
        if call.arguments.hasPrefix("toFile:") { return Self.nsDataWriteReplacement }
        return call.arguments.hasPrefix("to:") ? Self.writeReplacement : nil
    }

    /// The library's overload takes the class's own type; a raw value, an optional, `as Any`
    /// or a value of another type goes to Foundation's `Any?` one, which sets nothing; so does
    /// any call in a file that does not import DataProtection.
    private func setResourceValue(_ call: Call) -> String? {
        let arguments = call.labelledArguments
        guard arguments.count == 2, arguments[1].value.contains("fileProtectionKey"), let value = arguments.first?.value else { return nil }
        if !file.importsDataProtection {
            return "setResourceValue(_:forKey: .fileProtectionKey) sets no class on Linux in a file that does not import DataProtection "
                + "(add the import and pass a URLFileProtection); " + Self.setClassReplacement
        }
        guard !isProtectionValue(value) else { return nil }
        return "setResourceValue(_:forKey: .fileProtectionKey) with a value not typed URLFileProtection sets no class on Linux; "
            + Self.setClassReplacement
    }

    private func isProtectionValue(_ value: Substring) -> Bool {
        value.wholeMatch(of: /(?:URLFileProtection|FileProtectionType)?\s*\.\s*(?!rawValue\b)\w+/) != nil
            || value.wholeMatch(of: /(?:URLFileProtection|FileProtectionType)\s*\(\s*rawValue\s*:[^()]*\)/) != nil
            || facts.any(.protectionValue, in: [String(value)], file: file, at: value.startIndex)
    }

    /// `URL.setResourceValues(_:)` with a class among the values, or `NSURL`'s dictionary form
    /// with `.fileProtectionKey`: Linux Foundation stores neither where a library can reach.
    private func setResourceValues(_ call: Call) -> String? {
        let names = Expression.names(in: call.arguments)
        if call.arguments.contains("fileProtectionKey") || facts.any(.protectionResources, in: names, file: file, at: call.nameStart) {
            return "NSURL.setResourceValues with .fileProtectionKey sets no class on Linux; " + Self.setClassReplacement
        }
        guard call.assignsFileProtection(in: file.text) || facts.any(.protectingResourceValues, in: names, file: file, at: call.nameStart) else { return nil }
        return "setResourceValues with fileProtection sets no class on Linux; " + Self.setClassReplacement
    }

    /// `FileManager` is the protecting manager only in a file that imports DataProtection,
    /// and never when spelled `Foundation.FileManager`.
    private func fileManagerAttributes(_ call: Call) -> String? {
        // FileManager's signatures: the attributes are the first argument of setAttributes, the
        // `attributes:` one of the others.
        let attributes = call.name == "setAttributes" ? call.labelledArguments.first.flatMap { $0.label == nil ? $0.value : nil }
                                                      : call.argument("attributes")
        guard call.isMethod, let attributes, attributes.contains(/\.protectionKey\b/)
            || facts.any(.protectionAttributes, in: Expression.names(in: attributes), file: file, at: call.nameStart) else { return nil }
        if isFoundationsManager(call) {
            return "Foundation.FileManager.\(call.name) ignores .protectionKey on Linux; "
                + "with import DataProtection write `FileManager.default.\(call.name)(...)`, the protecting manager"
        }
        guard !file.importsDataProtection else { return nil }
        return "FileManager.\(call.name) ignores .protectionKey on Linux in a file that does not import DataProtection "
            + "(imports are per file); add `import DataProtection` to this file"
    }

    private func attributesRead(_ call: Call) -> String? {
        let after = file.text[file.text.index(after: call.end)...].drop { $0 == " " }
        guard after.prefixMatch(of: /\[\s*(?:FileAttributeKey)?\.protectionKey\s*\]/) != nil,
              isFoundationsManager(call) || !file.importsDataProtection else { return nil }
        return "attributesOfItem(atPath:)[.protectionKey] is nil on Linux with Foundation's FileManager; "
            + "add `import DataProtection` to this file (or read `try url.fileProtection`)"
    }

    /// On iOS a copy keeps the source's class; Foundation's copy on Linux takes its directory's.
    private func copy(_ call: Call) -> String? {
        guard isFoundationsManager(call) || (!file.importsDataProtection && moduleImportsDataProtection) else { return nil }
        return "copyItem with Foundation's FileManager gives the copy its directory's class on Linux, not the source's as on iOS; "
            + "add `import DataProtection` to this file and write `FileManager.default.copyItem(...)`"
    }

    private func isFoundationsManager(_ call: Call) -> Bool {
        call.receiver.hasSuffix("Foundation.FileManager.default") || call.receiver.hasSuffix("Foundation.FileManager()")
    }
}
