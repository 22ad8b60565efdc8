import Foundation

extension Data {
    /// Writes the data as `write(to:options:)` does, honouring the protection bits of
    /// `options` that Linux Foundation ignores: `.completeFileProtection`,
    /// `.completeFileProtectionUnlessOpen`,
    /// `.completeFileProtectionUntilFirstUserAuthentication` and `.noFileProtection`.
    ///
    /// The file's class is in force before its first byte is written. With `.atomic` the
    /// bytes go to a temporary file in the same directory, created in that class, synced
    /// and renamed over the target (with `.withoutOverwriting`, only if the target does not
    /// exist); whatever fails, the temporary file is removed. iOS code changes one word:
    ///
    /// ```swift
    /// try data.writeProtected(to: url, options: [.atomic, .completeFileProtection])
    /// ```
    ///
    /// Errors are Foundation's: `CocoaError.fileWriteNoPermission` (513) when the lock
    /// refuses the write, `.fileWriteFileExists` for `.withoutOverwriting`, with the path.
    /// A protection bit for a file outside a protfs mount throws
    /// `DataProtectionError.notOnProtfs` unless `ProtectedFileManager.outsideProtfs` is
    /// `.ignore`. Without protection bits this is `write(to:options:)`.
    public func writeProtected(to url: URL, options: Data.WritingOptions = []) throws {
        try ProtectedWrite.write(self, to: url.path, options: options)
    }
}
