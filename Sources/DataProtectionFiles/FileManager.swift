import Foundation

/// With `import DataProtection`, the name `FileManager` is the protecting manager: unchanged
/// iOS code such as
///
/// ```swift
/// FileManager.default.createFile(atPath: path, contents: data, attributes: [.protectionKey: FileProtectionType.complete])
/// try FileManager.default.setAttributes([.protectionKey: FileProtectionType.complete], ofItemAtPath: path)
/// ```
///
/// sets the protfs class, where Foundation's own manager on Linux returns success and does
/// nothing. A name declared in an imported module shadows Foundation's without ambiguity;
/// `Foundation.FileManager` still names Foundation's.
public typealias FileManager = ProtectedFileManager
