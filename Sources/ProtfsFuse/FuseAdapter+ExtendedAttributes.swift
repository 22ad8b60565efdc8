import CFuse
import Glibc
import ProtfsCore
import ProtfsSystem

extension FuseAdapter {
    /// Replies with a size when the caller asked for one (size 0), else with the bytes or
    /// `ERANGE` when they do not fit.
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
            let value = try fileSystem.extendedAttribute(Self.name(name), of: node(id))
            try replyXattrBytes(req, value, size: size)
        }
    }

    func listxattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int) {
        respond(req) { () throws(Errno) in
            var bytes: [UInt8] = []
            for name in try fileSystem.extendedAttributeNames(of: node(id)) {
                bytes.append(contentsOf: name)
                bytes.append(0)
            }
            try replyXattrBytes(req, bytes, size: size)
        }
    }

    func setxattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>?,
                  _ size: Int, _ flags: Int32) {
        respond(req) { () throws(Errno) in
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            try fileSystem.setExtendedAttribute(Self.name(name), bytes, flags: flags, of: node(id),
                                                caller: Self.caller(req))
            fuse_reply_err(req, 0)
        }
    }

    func removexattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            try fileSystem.removeExtendedAttribute(Self.name(name), of: node(id))
            fuse_reply_err(req, 0)
        }
    }
}
