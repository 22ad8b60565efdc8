import Glibc
import CProtfsSys

/// The kernel's bounds on extended attributes, whatever the file system: `XATTR_SIZE_MAX`
/// for one value and `XATTR_LIST_MAX` for one object's list of names, a NUL after each.
public enum ExtendedAttributeLimits {
    public static let valueBytes = 65536
    public static let nameListBytes = 65536
}

/// Extended attributes of the object a descriptor refers to. A descriptor open for I/O
/// uses the `f*xattr` calls. An `O_PATH` descriptor cannot (`EBADF`): a directory is then
/// opened as `.` relative to it, the same object by a one-step walk that no rename can
/// redirect; anything else (or a directory the daemon may not read) goes through the
/// descriptor's /proc link, which names the object itself. The /proc walk (the process, its
/// descriptor table, a proc inode, a ptrace check) costs several times the `.` open and its
/// close (docs/PERFORMANCE.md).
extension FileDescriptor {
    private func attributeCall<T: BinaryInteger>(_ direct: (Int32) -> T, _ throughPath: (String) -> T) throws(Errno) -> T {
        do {
            return try syscallRetrying { direct(rawValue) }
        } catch .badFile {
            if let directory = try? OwnedDescriptor.open(".", in: self, [.readOnly, .directory]) {
                let readable = directory.borrowed.rawValue
                return try syscallRetrying { direct(readable) }
            }
            let path = procPath
            return try syscallRetrying { throughPath(path) }
        }
    }

    /// Most values (hints, ids, sealed xattrs) fit the first buffer: one call, no size probe.
    private static let firstAttributeBuffer = 256

    public func extendedAttribute(_ name: String) throws(Errno) -> [UInt8] {
        var capacity = Self.firstAttributeBuffer
        while true {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(capacity, 1), alignment: 1)
            defer { buffer.deallocate() }
            do {
                let count = try attributeCall({ fgetxattr($0, name, buffer.baseAddress, capacity) },
                                              { getxattr($0, name, buffer.baseAddress, capacity) })
                return Array(buffer[0..<count])
            } catch .range {
                // Larger than the buffer (or grown in between): ask for the size, then again.
                capacity = try attributeCall({ fgetxattr($0, name, nil, 0) }, { getxattr($0, name, nil, 0) })
            }
        }
    }

    public func setExtendedAttribute(_ name: String, _ value: [UInt8], flags: Int32 = 0) throws(Errno) {
        _ = try value.withUnsafeBytes { bytes in
            Result { () throws(Errno) in
                try attributeCall({ fsetxattr($0, name, bytes.baseAddress, bytes.count, flags) },
                                  { setxattr($0, name, bytes.baseAddress, bytes.count, flags) })
            }
        }.get()
    }

    public func removeExtendedAttribute(_ name: String) throws(Errno) {
        _ = try attributeCall({ fremovexattr($0, name) }, { removexattr($0, name) })
    }

    public func extendedAttributeNames() throws(Errno) -> [String] {
        while true {
            let size = try attributeCall({ flistxattr($0, nil, 0) }, { listxattr($0, nil, 0) })
            if size == 0 { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            do {
                let count = try buffer.withUnsafeMutableBufferPointer { names in
                    Result { () throws(Errno) in
                        try attributeCall({ flistxattr($0, names.baseAddress, size) }, { listxattr($0, names.baseAddress, size) })
                    }
                }.get()
                return buffer[0..<count].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            } catch .range {
                continue  // grew in between: ask again
            }
        }
    }
}

/// `setxattr`'s flags, for code that answers them itself.
public enum ExtendedAttributeFlag {
    /// Fail with `EEXIST` if the attribute exists.
    public static let create = Int32(XATTR_CREATE)
    /// Fail with `ENODATA` unless the attribute exists.
    public static let replace = Int32(XATTR_REPLACE)
}
