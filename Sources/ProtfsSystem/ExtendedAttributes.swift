import Glibc
import CProtfsSys

/// Extended attributes of the object a descriptor refers to. `O_PATH` descriptors cannot be
/// used with `f*xattr`, so these go through the descriptor's /proc link with the `l*` calls
/// (which do not follow a final symlink, and the proc link names the object itself).
extension FileDescriptor {
    public func extendedAttribute(_ name: String) throws(Errno) -> [UInt8] {
        let path = procPath
        while true {
            let size = try syscallRetrying { getxattr(path, name, nil as UnsafeMutableRawPointer?, 0) }
            var value = [UInt8](repeating: 0, count: size)
            let n = value.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, size) }
            if n >= 0 { return Array(value[0..<n]) }
            let e = Errno.current
            if e != .range && e != .interrupted { throw e }  // grew in between: ask again
        }
    }

    public func setExtendedAttribute(_ name: String, _ value: [UInt8], flags: Int32 = 0) throws(Errno) {
        let path = procPath
        _ = try syscallRetrying { value.withUnsafeBytes { setxattr(path, name, $0.baseAddress, value.count, flags) } }
    }

    public func removeExtendedAttribute(_ name: String) throws(Errno) {
        let path = procPath
        _ = try syscallRetrying { removexattr(path, name) }
    }

    public func extendedAttributeNames() throws(Errno) -> [String] {
        let path = procPath
        while true {
            let size = try syscallRetrying { listxattr(path, nil as UnsafeMutablePointer<CChar>?, 0) }
            if size == 0 { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let n = listxattr(path, &buffer, size)
            if n >= 0 {
                return buffer[0..<n].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            }
            let e = Errno.current
            if e != .range && e != .interrupted { throw e }
        }
    }
}
