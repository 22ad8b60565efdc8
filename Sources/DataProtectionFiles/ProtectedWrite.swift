import CProtfsSys
import Foundation
import Glibc
import ProtfsDomain
import ProtfsSystem

/// Writes a file whose class is in force before its first byte (README.md). On protfs
/// a new file takes its directory's class, and re-classing a file re-wraps only its key,
/// which for an empty file is all there is: so the file is created empty, classed, and only
/// then written. An atomic write does that to a temporary file beside the target, syncs it
/// and renames it over the target; whatever fails, the temporary is removed.
enum ProtectedWrite {
    /// Writes `data` as `Data.write(to:options:)` does, in `protection` when given (else
    /// in the class the options' protection bits ask for, if any).
    static func write(_ data: Data, to path: String, protection: ProtectionClass? = nil, options: Data.WritingOptions) throws {
        guard let protectionClass = try protection ?? options.requestedProtection(),
              try ProtfsLocation.classApplies(at: path) else {
            return try data.write(to: URL(fileURLWithPath: path), options: options.withoutProtection)
        }
        do {
            if options.contains(.atomic) {
                try writeAtomically(data, to: path, protectionClass, noReplace: options.contains(.withoutOverwriting))
            } else {
                try writeInPlace(data, to: path, protectionClass, noReplace: options.contains(.withoutOverwriting))
            }
        } catch {
            throw FileErrors.cocoa(error, path: path, .writing)
        }
    }

    private static func writeAtomically(_ data: Data, to path: String, _ protectionClass: ProtectionClass, noReplace: Bool) throws(Errno) {
        let temporary = temporaryPath(beside: path)
        let file = try OwnedDescriptor.open(path: temporary, [.writeOnly, .create, .exclusive, .closeOnExec], mode: 0o666)
        do {
            try fill(file, protectionClass, data)
        } catch {
            unlink(temporary)
            throw error
        }
        let renamed = protfs_renameat2(AT_FDCWD, temporary, AT_FDCWD, path, noReplace ? protfs_RENAME_NOREPLACE : 0)
        if renamed != 0 {
            let failure = Errno.current
            unlink(temporary)
            throw failure
        }
        syncDirectory(of: path)
    }

    private static func writeInPlace(_ data: Data, to path: String, _ protectionClass: ProtectionClass, noReplace: Bool) throws(Errno) {
        // Create it if it is new (so that a failure removes only what this call made). An
        // existing file moving to a class at least as strong is re-classed before it is
        // emptied (re-classing re-wraps its key and writes no content), so that a refusal
        // leaves it as it was; one moving to a weaker class is emptied first, so that its old
        // contents never stand under the weaker class.
        var created = true
        let file: OwnedDescriptor
        do {
            file = try OwnedDescriptor.open(path: path, [.writeOnly, .create, .exclusive, .closeOnExec], mode: 0o666)
        } catch .exists where !noReplace {
            created = false
            file = try OwnedDescriptor.open(path: path, [.writeOnly, .closeOnExec])
        }
        do {
            try fill(file, protectionClass, data)
        } catch {
            if created { unlink(path) }
            throw error
        }
    }

    /// Empties and classes the file (in the order above), then writes and syncs the bytes;
    /// closes it whatever happens.
    private static func fill(_ owned: consuming OwnedDescriptor, _ protectionClass: ProtectionClass, _ data: Data) throws(Errno) {
        let file = owned.borrowed
        let weakening = try ClassAttribute.get(file).map { $0.strength > protectionClass.strength } ?? false
        if weakening { try file.truncate(to: 0) }
        try ClassAttribute.set(protectionClass, on: file)
        if !weakening { try file.truncate(to: 0) }
        try data.withUnsafeBytes { bytes in Result { () throws(Errno) in try file.write(bytes, at: 0) } }.get()
        try file.sync()
    }

    /// A hidden name in the target's directory (a rename never crosses filesystems), unique
    /// enough that `O_EXCL` only fails on a real collision.
    static func temporaryPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return directory + "." + name.prefix(200) + ".protfs-" + suffix + ".tmp"
    }

    /// Makes the rename durable; a directory that cannot be opened for that is left as is.
    private static func syncDirectory(of path: String) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard let handle = try? OwnedDescriptor.open(path: directory, [.directory, .closeOnExec]) else { return }
        try? handle.borrowed.sync()
    }
}
