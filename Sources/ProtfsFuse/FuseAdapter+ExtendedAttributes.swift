import CFuse
import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

extension FuseAdapter {
    /// Replies with a size when the caller asked for one (size 0), else with the bytes or
    /// `ERANGE` when they do not fit. The caller wipes `bytes` (plaintext) afterwards.
    func replyXattrBytes(_ req: fuse_req_t, _ bytes: [UInt8], size: Int) throws(Errno) {
        if size == 0 {
            fuse_reply_xattr(req, bytes.count)
            return
        }
        guard bytes.count <= size else { throw .range }
        _ = bytes.withUnsafeBytes { fuse_reply_buf(req, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }

    func getxattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ name: UnsafePointer<CChar>, _ size: Int) {
        respond(req) { () throws(Errno) in
            var plaintextName = Self.name(name)
            defer { secureZero(&plaintextName) }
            var value = try fileSystem.extendedAttribute(plaintextName, of: node(id))
            defer { secureZero(&value) }
            try replyXattrBytes(req, value, size: size)
        }
    }

    func listxattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int) {
        respond(req) { () throws(Errno) in
            var names = try fileSystem.extendedAttributeNames(of: node(id))
            // Sized up front, so growing never leaves a copy of the names behind unwiped.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(names.reduce(0) { $0 + $1.count + 1 })
            defer {
                secureZero(&bytes)
                for index in names.indices { secureZero(&names[index]) }
            }
            for name in names {
                bytes.append(contentsOf: name)
                bytes.append(0)
            }
            try replyXattrBytes(req, bytes, size: size)
        }
    }

    func setxattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>?,
                  _ size: Int, _ flags: Int32) {
        respond(req) { () throws(Errno) in
            var bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            defer { secureZero(&bytes) }
            var plaintextName = Self.name(name)
            defer { secureZero(&plaintextName) }
            try fileSystem.setExtendedAttribute(plaintextName, bytes, flags: flags, of: node(id),
                                                caller: Self.caller(req))
            fuse_reply_err(req, 0)
        }
    }

    func removexattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            var plaintextName = Self.name(name)
            defer { secureZero(&plaintextName) }
            try fileSystem.removeExtendedAttribute(plaintextName, of: node(id))
            fuse_reply_err(req, 0)
        }
    }
}
