import CProtfsSys
import Glibc
import ProtfsDomain
import ProtfsSystem

/// The `user.protfs.class` extended attribute (docs/CLASSES.md), by path or descriptor.
enum ClassAttribute {
    static let name = "user.protfs.class"

    /// The class of the file or directory at `path` (symlinks followed, as `FileManager`
    /// does); nil for an object without one (a symlink's target outside protfs, a FIFO).
    static func get(path: String) throws(Errno) -> ProtectionClass? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(Errno) in try syscallRetrying { getxattr(path, name, bytes.baseAddress, bytes.count) } }
            }.get()
        } catch .noData, .notSupported {
            return nil
        }
        return ProtectionClass(spelling: String(decoding: buffer[0..<count], as: UTF8.self))
    }

    static func set(_ protectionClass: ProtectionClass, path: String) throws(Errno) {
        let value = Array(protectionClass.name.utf8)
        _ = try value.withUnsafeBytes { bytes in
            Result { () throws(Errno) in try syscallRetrying { setxattr(path, name, bytes.baseAddress, bytes.count, 0) } }
        }.get()
    }

    static func get(_ file: FileDescriptor) throws(Errno) -> ProtectionClass? {
        do {
            return ProtectionClass(spelling: String(decoding: try file.extendedAttribute(name), as: UTF8.self))
        } catch .noData, .notSupported {
            return nil
        }
    }

    static func set(_ protectionClass: ProtectionClass, on file: FileDescriptor) throws(Errno) {
        try file.setExtendedAttribute(name, Array(protectionClass.name.utf8))
    }
}

extension ProtectionClass {
    /// How much a class protects while locked: `complete` most, `none` least
    /// (`completeUnlessOpen` refuses opening existing files while locked,
    /// `completeUntilFirstUserAuthentication` only before the first unlock).
    var strength: Int {
        switch self {
        case .complete: 3
        case .completeUnlessOpen: 2
        case .completeUntilFirstUserAuthentication: 1
        case .none: 0
        }
    }
}
