import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

extension ClassHint {
    /// The hint of a file just created, through its open content.
    public static func write(_ protectionClass: ProtectionClass, to file: EncryptedFile, keys: FilesystemKeys) throws(Errno) {
        try file.setBackingAttribute(attributeName, seal(protectionClass, objectID: file.fileID, keys: keys))
    }
}
