import Foundation

/// The Swift files a path names: itself, or those in its tree (build products and hidden
/// directories left out), in a stable order.
enum SwiftFiles {
    static func under(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        guard let enumerator = FileManager.default.enumerator(at: URL(fileURLWithPath: path), includingPropertiesForKeys: [.isDirectoryKey],
                                                              options: [.skipsHiddenFiles]) else { return [] }
        var files: [String] = []
        for case let url as URL in enumerator {
            if url.lastPathComponent == ".build" {
                enumerator.skipDescendants()
            } else if url.pathExtension == "swift" {
                files.append(url.path)
            }
        }
        return files.sorted()
    }
}
