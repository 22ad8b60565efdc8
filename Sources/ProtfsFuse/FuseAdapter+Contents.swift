import CFuse
import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

extension FuseAdapter {
    /// Reply buffers for reads, up to the largest read the kernel sends. Four reads at a time
    /// keep both cores and the disk busy for a sequential reader (the readahead is four
    /// requests); more would only hold memory, a megabyte for every worker reading at once.
    /// They hold plaintext: locked in memory, wiped after each reply.
    static let replyBuffers = BufferPool(byteCount: LowLevelOperations.maxRequestBytes, limit: 4, holdsPlaintext: true)

    static func isWritable(_ flags: Int32) -> Bool { flags & O_ACCMODE != O_RDONLY }

    func open(_ req: fuse_req_t, _ id: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            let holder = Self.caller(req).uid
            let handle = try withHandleShare(for: holder) { () throws(Errno) in
                try fileSystem.open(node(id), writable: Self.isWritable(fi.pointee.flags))
            }
            store(handle, holder: holder, in: fi)
            // Reads from cached pages never reach the daemon: a read that must move the access
            // time (relatime) has to, so the pages go.
            if fi.pointee.flags & O_ACCMODE != O_WRONLY, fileSystem.accessTimeIsDue(of: handle.node) {
                fi.pointee.keep_cache = 0
            }
            if fuse_reply_open(req, fi) != 0 { dropHandle(fi) }
        }
    }

    func create(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t,
                _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            let caller = Self.caller(req)
            try checkRoomForNode(req)
            let created = try withHandleShare(for: caller.uid) { () throws(Errno) in
                try fileSystem.createFile(Self.name(name), in: node(parent), mode: mode, caller: caller,
                                          writable: Self.isWritable(fi.pointee.flags))
            }
            store(created.handle, holder: caller.uid, in: fi)
            var entry = fuse_entry_param()
            // Admitted above: a node is refused only while others of the uid's requests filled
            // its share meanwhile, and then the file was made and opened: it is counted anyway.
            entry.ino = inodes.rememberAdmitted(created.node, for: caller.uid)
            entry.attr = created.attributes
            entry.attr_timeout = cacheTimeout
            entry.entry_timeout = cacheTimeout
            if fuse_reply_create(req, &entry, fi) != 0 {
                dropHandle(fi)
                inodes.forget(entry.ino, count: 1)
            }
        }
    }

    /// Releases the handle stored in `fi` (on `release`, or when the kernel did not take it).
    func dropHandle(_ fi: UnsafeMutablePointer<fuse_file_info>) {
        guard let held = Self.heldHandle(fi) else { return }
        fileSystem.release(held.handle)
        giveBackHandleShare(for: held.holder)
        Unmanaged.passUnretained(held).release()
        fi.pointee.fh = 0
    }

    func read(_ req: fuse_req_t, _ size: Int, _ offset: off_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            guard let handle = Self.handle(fi) else { throw .badFile }
            try Self.replyBuffers.withBuffer(count: max(size, 1)) { (buffer) throws(Errno) in
                let count = try fileSystem.read(handle, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size]), at: Int64(offset))
                // The pool wipes the plaintext as soon as the kernel has it.
                fuse_reply_buf(req, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), count)
            }
        }
    }

    func write(_ req: fuse_req_t, _ id: fuse_ino_t, _ data: UnsafePointer<CChar>, _ size: Int, _ offset: off_t,
               _ fi: UnsafeMutablePointer<fuse_file_info>) {
        // The payload sits in the request buffer, which `RequestLoop` wipes once handled.
        respond(req) { () throws(Errno) in
            guard let handle = Self.handle(fi) else { throw .badFile }
            // A writer without CAP_FSETID through a direct-I/O descriptor: the kernel leaves the
            // set-ID bits to us (through the page cache it drops them itself, by a SETATTR).
            let flags = RequestLoop.writeArguments(precedingPayload: data).write_flags
            if flags & UInt32(FUSE_WRITE_KILL_SUIDGID) != 0, try fileSystem.dropSetIDBits(of: handle.node, writtenBy: Self.caller(req)), let session {
                _ = fuse_lowlevel_notify_inval_inode(session, id, -1, 0)
            }
            try fileSystem.write(handle, UnsafeRawBufferPointer(start: data, count: size), at: Int64(offset))
            fuse_reply_write(req, size)
        }
    }

    func flush(_ req: fuse_req_t) {
        // Data is sealed as it is written; nothing is buffered here.
        fuse_reply_err(req, 0)
    }

    func release(_ req: fuse_req_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        dropHandle(fi)
        fuse_reply_err(req, 0)
    }

    func fsync(_ req: fuse_req_t, _ dataOnly: Int32, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            guard let handle = Self.handle(fi) else { throw .badFile }
            try fileSystem.sync(handle, dataOnly: dataOnly != 0)
            fuse_reply_err(req, 0)
        }
    }

    func fallocate(_ req: fuse_req_t, _ mode: Int32, _ offset: off_t, _ length: off_t,
                   _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            guard let handle = Self.handle(fi) else { throw .badFile }
            guard offset >= 0, length > 0 else { throw .invalid }
            switch mode {
            case 0:
                try fileSystem.allocate(handle, offset: Int64(offset), length: Int64(length))
            default:
                // Punching or zeroing ranges would need re-sealing chunks: not offered.
                throw .notSupported
            }
            fuse_reply_err(req, 0)
        }
    }
}
