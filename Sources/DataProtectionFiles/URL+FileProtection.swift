import Foundation

extension URL {
    /// The protection class of the file or directory at this file URL, standing in for the
    /// `.fileProtectionKey` resource value that Linux Foundation lacks; nil outside protfs
    /// and for objects without a class (symlinks, FIFOs).
    public var fileProtection: FileProtectionType? {
        get throws { try ProtectedFileManager.default.protection(atPath: path) }
    }

    /// Sets the protection class of the file or directory at this file URL, as
    /// `setResourceValues` with `.fileProtectionKey` does on iOS. Re-classing a file needs
    /// its old and new classes available now (else `CocoaError.fileWriteNoPermission`).
    public func setFileProtection(_ protection: FileProtectionType) throws {
        try ProtectedFileManager.default.setProtection(protectionClass(ofAttribute: protection), atPath: path)
    }
}
