import CProtfsSys
import Foundation
import Glibc
import ProtfsDomain
import ProtfsSystem

/// A `FileManager` that honours `.protectionKey` as iOS does, on a protfs mount.
///
/// Linux Foundation accepts `.protectionKey` and does nothing with it. This subclass sets
/// and reads the protfs class of files and directories instead (the `user.protfs.class`
/// extended attribute), so iOS code needs one word changed:
///
/// ```swift
/// try ProtectedFileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
///                                                  attributes: [.protectionKey: FileProtectionType.complete])
/// ```
///
/// Everything else behaves as `FileManager`'s. Asking for a class outside a protfs mount
/// throws `DataProtectionError.notOnProtfs` unless `outsideProtfs` is `.ignore`.
open class ProtectedFileManager: Foundation.FileManager, @unchecked Sendable {
    private static let shared = ProtectedFileManager()

    /// The shared protected file manager, as `FileManager.default` is the shared one.
    open override class var `default`: ProtectedFileManager { shared }

    /// What asking for a class outside a protfs mount does, for the whole process:
    /// `.fail` (the default) or `.ignore`.
    public static var outsideProtfs: OutsideProtfs {
        get { outsideProtfsSetting.withLock { $0 } }
        set { outsideProtfsSetting.withLock { $0 = newValue } }
    }

    /// Sets the attributes as `FileManager` does, and `.protectionKey` as the item's
    /// protfs class. Re-classing a file needs its old and its new class available now
    /// (else `CocoaError.fileWriteNoPermission`); a directory's class changes only what is
    /// created in it afterwards.
    open override func setAttributes(_ attributes: [FileAttributeKey: Any], ofItemAtPath path: String) throws {
        var others = attributes
        let protection = others.removeValue(forKey: .protectionKey)
        if !others.isEmpty { try super.setAttributes(others, ofItemAtPath: path) }
        if let protection { try setProtection(protectionClass(ofAttribute: protection), atPath: path) }
    }

    /// `FileManager`'s attributes, with `.protectionKey` for a file or directory on protfs.
    open override func attributesOfItem(atPath path: String) throws -> [FileAttributeKey: Any] {
        var attributes = try super.attributesOfItem(atPath: path)
        if let protection = try protection(atPath: path) { attributes[.protectionKey] = protection }
        return attributes
    }

    /// Creates a file whose class, when `.protectionKey` asks for one, is in force before
    /// its first byte: the contents go to a classed temporary file renamed into place.
    /// False on failure, as `FileManager`'s.
    @discardableResult
    open override func createFile(atPath path: String, contents data: Data?, attributes: [FileAttributeKey: Any]? = nil) -> Bool {
        var others = attributes ?? [:]
        guard let protection = others.removeValue(forKey: .protectionKey) else {
            return super.createFile(atPath: path, contents: data, attributes: attributes)
        }
        do {
            try ProtectedWrite.write(data ?? Data(), to: path, protection: protectionClass(ofAttribute: protection), options: .atomic)
            if !others.isEmpty { try super.setAttributes(others, ofItemAtPath: path) }
            return true
        } catch {
            return false
        }
    }

    /// Creates a directory, and with `withIntermediateDirectories` its missing parents, each
    /// given the class of `.protectionKey` before anything can be created in it (a
    /// directory's class is the default of its new children): each is made under a hidden
    /// name, classed, then renamed into place.
    open override func createDirectory(atPath path: String, withIntermediateDirectories createIntermediates: Bool,
                                       attributes: [FileAttributeKey: Any]? = nil) throws {
        var others = attributes ?? [:]
        guard let protection = others.removeValue(forKey: .protectionKey) else {
            return try super.createDirectory(atPath: path, withIntermediateDirectories: createIntermediates, attributes: attributes)
        }
        let protectionClass = try protectionClass(ofAttribute: protection)
        guard try ProtfsLocation.classApplies(at: path) else {
            return try super.createDirectory(atPath: path, withIntermediateDirectories: createIntermediates, attributes: others)
        }
        let missing = createIntermediates ? missingDirectories(upTo: path) : [path]
        guard !missing.isEmpty else {
            // It exists: FileManager decides whether that is success.
            return try super.createDirectory(atPath: path, withIntermediateDirectories: createIntermediates, attributes: others)
        }
        for directory in missing {
            do {
                try createClassedDirectory(atPath: directory, protectionClass, attributes: others)
            } catch let error as CocoaError where error.code == .fileWriteFileExists && directory != path {
                continue  // a parent made meanwhile by someone else
            }
        }
    }

    /// Copies as `FileManager` does; on protfs, each file and directory copied keeps its
    /// source's class, in force before the copy's first byte, as on iOS (Apple's copy creates
    /// the destination in the source's class), where Foundation's copy would take the class
    /// of the directory it lands in. Symbolic links and other objects are Foundation's to copy.
    open override func copyItem(atPath srcPath: String, toPath dstPath: String) throws {
        var status = stat()
        guard lstat(srcPath, &status) == 0, status.isRegularFile || status.isDirectory,
              ProtfsLocation.mountpoint(holding: dstPath) != nil, let protectionClass = try sourceClass(srcPath) else {
            return try super.copyItem(atPath: srcPath, toPath: dstPath)
        }
        guard status.isDirectory else { return try ProtectedCopy.copyFile(srcPath, to: dstPath, protectionClass) }
        try createClassedDirectory(atPath: dstPath, protectionClass, attributes: [.posixPermissions: Int(status.st_mode & 0o777)])
        for name in try contentsOfDirectory(atPath: srcPath) {
            try copyItem(atPath: srcPath + "/" + name, toPath: dstPath + "/" + name)
        }
    }

    /// `copyItem(atPath:toPath:)` for file URLs.
    open override func copyItem(at srcURL: URL, to dstURL: URL) throws {
        try copyItem(atPath: srcURL.path, toPath: dstURL.path)
    }

    private func sourceClass(_ path: String) throws -> ProtectionClass? {
        do {
            return try ClassAttribute.get(path: path)
        } catch {
            throw FileErrors.cocoa(error, path: path, .reading)
        }
    }

    /// Makes the directory under a hidden name beside `path`, classes it and renames it into
    /// place (never over an existing one); removes it on any failure.
    private func createClassedDirectory(atPath path: String, _ protectionClass: ProtectionClass,
                                        attributes: [FileAttributeKey: Any]) throws {
        let temporary = ProtectedWrite.temporaryPath(beside: path)
        try super.createDirectory(atPath: temporary, withIntermediateDirectories: false, attributes: attributes)
        do throws(Errno) {
            try ClassAttribute.set(protectionClass, path: temporary)
            if protfs_renameat2(AT_FDCWD, temporary, AT_FDCWD, path, protfs_RENAME_NOREPLACE) != 0 { throw Errno.current }
        } catch {
            rmdir(temporary)
            throw FileErrors.cocoa(error, path: path, .writing)
        }
    }

    /// `createDirectory(atPath:withIntermediateDirectories:attributes:)` for a file URL.
    open override func createDirectory(at url: URL, withIntermediateDirectories createIntermediates: Bool,
                                       attributes: [FileAttributeKey: Any]? = nil) throws {
        try createDirectory(atPath: url.path, withIntermediateDirectories: createIntermediates, attributes: attributes)
    }

    /// The class of the file or directory at `path`; nil off protfs or for other kinds of
    /// object.
    func protection(atPath path: String) throws -> FileProtectionType? {
        guard ProtfsLocation.mountpoint(holding: path) != nil else { return nil }
        do {
            return try ClassAttribute.get(path: path).map(FileProtectionType.init)
        } catch {
            throw FileErrors.cocoa(error, path: path, .reading)
        }
    }

    /// Sets the class of an existing file or directory, or refuses off protfs (unless the
    /// opt-in makes that a no-op).
    func setProtection(_ protectionClass: ProtectionClass, atPath path: String) throws {
        guard try ProtfsLocation.classApplies(at: path) else { return }
        try setClass(protectionClass, atPath: path)
    }

    private func setClass(_ protectionClass: ProtectionClass, atPath path: String) throws {
        do {
            try ClassAttribute.set(protectionClass, path: path)
        } catch {
            throw FileErrors.cocoa(error, path: path, .writing)
        }
    }

    /// `path` and those of its ancestors that do not exist yet, outermost first; empty when
    /// `path` exists.
    private func missingDirectories(upTo path: String) -> [String] {
        var missing: [String] = []
        var current = CanonicalPath.lexicallyNormalized(path)
        while current != "/", !fileExists(atPath: current) {
            missing.insert(current, at: 0)
            current = String(current[..<current.lastIndex(of: "/")!])
            if current.isEmpty { current = "/" }
        }
        return missing
    }
}
