import Foundation

// Foundation's resource names that Linux Foundation lacks, so that iOS code naming them
// compiles. Linux Foundation's `resourceValues(forKeys:)` and `setResourceValues(_:)` do
// not reach a library, so through them the class is neither read nor set:
// `dataprotection-lint` lists every such call with its replacement (`url.fileProtection`,
// `url.setFileProtection(_:)`).

/// The class of a file as a resource value: the same four values as `FileProtectionType`.
public typealias URLFileProtection = FileProtectionType

extension URLResourceKey {
    /// The file protection class (`URLFileProtection`).
    public static var fileProtectionKey: URLResourceKey { URLResourceKey(rawValue: "NSURLFileProtectionKey") }
}

extension URLResourceValues {
    /// The class among these values; Linux Foundation never fills it in, and a value set here
    /// goes nowhere (`dataprotection-lint` reports both uses).
    public var fileProtection: URLFileProtection? {
        get { allValues[.fileProtectionKey] as? URLFileProtection }
        set {}  // Linux Foundation's values have no storage a library can reach.
    }
}

// Foundation on Linux declares `FileProtectionType` without `Equatable`; iOS code compares
// classes, switches over them and keeps them in sets.
extension FileProtectionType: @retroactive Equatable, @retroactive Hashable {}

extension NSURL {
    /// Sets the class of the file or directory at this file URL when `key` is
    /// `.fileProtectionKey`, as iOS does (`setResourceValue(URLFileProtection.complete, forKey:
    /// .fileProtectionKey)`); any other key goes to Foundation. This overload takes the class's
    /// own type, so the compiler prefers it to Foundation's (`Any?`), which on Linux returns
    /// success and sets nothing.
    public func setResourceValue(_ value: URLFileProtection, forKey key: URLResourceKey) throws {
        guard key == .fileProtectionKey else { return try setResourceValue(value as Any?, forKey: key) }
        guard isFileURL, let path else { throw CocoaError(.fileWriteUnsupportedScheme) }
        try ProtectedFileManager.default.setProtection(protectionClass(ofAttribute: value), atPath: path)
    }
}
