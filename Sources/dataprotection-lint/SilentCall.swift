/// A call that compiles on Linux, returns success and sets no protection class: where it is
/// and what to write instead.
struct SilentCall: Equatable {
    let line: Int
    let column: Int
    let replacement: String

    /// The data protection options of `Data.WritingOptions`, which Linux Foundation ignores.
    static let protectionOptions = ["completeFileProtectionUntilFirstUserAuthentication", "completeFileProtectionUnlessOpen",
                                    "completeFileProtection", "noFileProtection", "fileProtectionMask"]

    /// Every such call in a Swift file's text, in the order they appear.
    static func find(in source: String) -> [SilentCall] {
        let code = SwiftCode(source)
        var found: [SilentCall] = []
        for call in Call.all(in: code.characters) {
            guard let replacement = replacement(for: call) else { continue }
            let (line, column) = code.position(of: call.nameOffset)
            found.append(SilentCall(line: line, column: column, replacement: replacement))
        }
        return found
    }

    private static func replacement(for call: Call) -> String? {
        let arguments = call.arguments
        let protects = protectionOptions.contains { arguments.contains($0) }
        switch call.name {
        case "write" where protects && arguments.hasPrefix("toFile:"):
            return "NSData.write(toFile:options:) ignores the file protection options on Linux; "
                + "with import DataProtection write `try Data(referencing: data).writeProtected(to: URL(fileURLWithPath: path), options: ...)`"
        case "write" where protects && arguments.hasPrefix("to:"):
            return "Data.write(to:options:) ignores the file protection options on Linux; "
                + "with import DataProtection write `try data.writeProtected(to: url, options: ...)`"
        case "setResourceValue" where arguments.contains("fileProtectionKey") && !call.passesProtectionType:
            return "setResourceValue(_:forKey: .fileProtectionKey) with a value not typed URLFileProtection sets no class on Linux; "
                + "with import DataProtection write `try url.setFileProtection(.complete)` (the class you set)"
        case "setResourceValues":
            return call.assignsFileProtection
                ? "setResourceValues with fileProtection sets no class on Linux; "
                    + "with import DataProtection write `try url.setFileProtection(.complete)` (the class you set)"
                : nil
        case "resourceValues" where arguments.contains("fileProtectionKey"):
            return "resourceValues(forKeys: [.fileProtectionKey]) returns no class on Linux; "
                + "with import DataProtection read `try url.fileProtection`"
        default:
            return nil
        }
    }
}
