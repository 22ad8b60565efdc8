import DataProtection
import Foundation

/// iOS code that makes its own manager, as code does to give it a delegate: `FileManager()`
/// is a protecting manager with `import DataProtection`, as `FileManager.default` is.
enum OwnFileManager {
    /// Creates `own.txt` in `directory` in the `complete` class through a manager of its own;
    /// prints whether it did and what class it reads back.
    static func run(in directory: String) -> Int32 {
        let manager = FileManager()
        let path = directory + "/own.txt"
        let created = manager.createFile(atPath: path, contents: "own".data(using: .utf8),
                                         attributes: [.protectionKey: FileProtectionType.complete])
        let protection = (try? manager.attributesOfItem(atPath: path))?[.protectionKey] as? FileProtectionType
        print("FileManager(): created \(created), \(protection?.rawValue ?? "no class")")
        return created && protection == .complete ? 0 : 1
    }
}
