import ProtfsDomain
import ProtfsSystem

/// Directories of each class, as the class tests of the harness and of the mount make them.
extension VaultHarness {
    /// The directory of one class that `makeClassDirectories` creates.
    public static func classDirectory(_ protectionClass: ProtectionClass) -> String { "d-\(protectionClass.name)" }

    /// Makes `d-CLASS` for every class (re-classed after it is made, so what is created in it
    /// inherits CLASS) holding `files`, name to contents.
    public func makeClassDirectories(holding files: [String: [UInt8]] = [:]) throws(Errno) {
        for protectionClass in ProtectionClass.allCases {
            let directory = Self.classDirectory(protectionClass)
            try makeDirectory(directory, protectionClass: protectionClass.name)
            for (name, contents) in files { try createFile("\(directory)/\(name)", contents: contents) }
        }
    }
}
