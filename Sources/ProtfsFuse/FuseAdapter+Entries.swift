import CFuse
import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

extension FuseAdapter {
    func lookup(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            let child: BackingNode
            let attributes: stat
            do throws(Errno) {
                (child, attributes) = try fileSystem.lookupWithAttributes(Self.name(name), in: node(parent))
            } catch .noEntry {
                // A negative entry the kernel may cache: every create goes through here.
                var negative = fuse_entry_param()
                negative.entry_timeout = cacheTimeout
                fuse_reply_entry(req, &negative)
                return
            }
            listingAdvisor.lookedUp(directory: child.isDirectory, in: parent, by: Self.caller(req).pid)
            try replyEntry(req, child, attributes: attributes)
        }
    }

    func forget(_ req: fuse_req_t, _ id: fuse_ino_t, _ count: UInt64) {
        inodes.forget(id, count: count)
        fuse_reply_none(req)
    }

    func forgetMany(_ req: fuse_req_t, _ count: Int, _ items: UnsafeMutablePointer<fuse_forget_data>) {
        for i in 0..<count { inodes.forget(items[i].ino, count: items[i].nlookup) }
        fuse_reply_none(req)
    }

    func getattr(_ req: fuse_req_t, _ id: fuse_ino_t) {
        respond(req) { () throws(Errno) in
            replyAttributes(req, try fileSystem.attributes(of: node(id)))
        }
    }

    func setattr(_ req: fuse_req_t, _ id: fuse_ino_t, _ attr: UnsafeMutablePointer<stat>, _ toSet: Int32,
                 _ fi: UnsafeMutablePointer<fuse_file_info>?) {
        respond(req) { () throws(Errno) in
            let st = attr.pointee
            var changes = VaultFileSystem.AttributeChanges()
            if toSet & FUSE_SET_ATTR_MODE != 0 { changes.mode = st.st_mode }
            if toSet & FUSE_SET_ATTR_UID != 0 { changes.uid = st.st_uid }
            if toSet & FUSE_SET_ATTR_GID != 0 { changes.gid = st.st_gid }
            if toSet & FUSE_SET_ATTR_SIZE != 0 { changes.size = Int64(st.st_size) }
            if toSet & FUSE_SET_ATTR_ATIME_NOW != 0 { changes.accessTime = .now }
            else if toSet & FUSE_SET_ATTR_ATIME != 0 { changes.accessTime = .at(seconds: st.st_atim.tv_sec, nanoseconds: st.st_atim.tv_nsec) }
            if toSet & FUSE_SET_ATTR_MTIME_NOW != 0 { changes.modificationTime = .now }
            else if toSet & FUSE_SET_ATTR_MTIME != 0 {
                changes.modificationTime = .at(seconds: st.st_mtim.tv_sec, nanoseconds: st.st_mtim.tv_nsec)
            }
            let result = try fileSystem.setAttributes(changes, of: node(id), handle: Self.handle(fi), caller: Self.caller(req))
            replyAttributes(req, result)
        }
    }

    func readlink(_ req: fuse_req_t, _ id: fuse_ino_t) {
        respond(req) { () throws(Errno) in
            var target = try fileSystem.readLink(node(id))
            defer { secureZero(&target) }
            _ = Self.withCString(target) { fuse_reply_readlink(req, $0) }
        }
    }

    func mknod(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t, _ device: dev_t) {
        respond(req) { () throws(Errno) in
            try checkRoomForNode(req)
            let created = try fileSystem.makeNode(Self.name(name), in: node(parent), mode: mode, device: device,
                                                  caller: Self.caller(req))
            try replyEntry(req, created)
        }
    }

    func mkdir(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>, _ mode: mode_t) {
        respond(req) { () throws(Errno) in
            try checkRoomForNode(req)
            let created = try fileSystem.makeDirectory(Self.name(name), in: node(parent), mode: mode, caller: Self.caller(req))
            try replyEntry(req, created)
        }
    }

    func symlink(_ req: fuse_req_t, _ target: UnsafePointer<CChar>, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            var plaintextTarget = Self.name(target)
            defer { secureZero(&plaintextTarget) }
            try checkRoomForNode(req)
            let created = try fileSystem.makeSymlink(Self.name(name), in: node(parent), target: plaintextTarget,
                                                     caller: Self.caller(req))
            try replyEntry(req, created)
        }
    }

    func unlink(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            try fileSystem.unlink(Self.name(name), in: node(parent))
            fuse_reply_err(req, 0)
        }
    }

    func rmdir(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            let record = try fileSystem.removeDirectory(Self.name(name), in: node(parent))
            fuse_reply_err(req, 0)
            if let record { inodes.releaseLater(record) }
        }
    }

    func rename(_ req: fuse_req_t, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>,
                _ newParent: fuse_ino_t, _ newName: UnsafePointer<CChar>, _ flags: UInt32) {
        respond(req) { () throws(Errno) in
            let renameFlags = FileDescriptor.RenameFlags(rawValue: flags)
            guard !renameFlags.contains(.whiteout) else { throw .invalid }
            // The kernel keeps its node for a renamed symlink: it now opens at its new place
            // (and names a new object if the rename upgraded an older format).
            try fileSystem.rename(Self.name(name), in: node(parent), to: Self.name(newName),
                                  in: node(newParent), flags: renameFlags) { moved in
                inodes.replaceNode(of: moved.formerIdentity, with: moved.node)
            }
            fuse_reply_err(req, 0)
        }
    }

    func link(_ req: fuse_req_t, _ id: fuse_ino_t, _ newParent: fuse_ino_t, _ newName: UnsafePointer<CChar>) {
        respond(req) { () throws(Errno) in
            let target = try node(id)
            try fileSystem.link(target, as: Self.name(newName), in: node(newParent))
            try replyEntry(req, target)
        }
    }

    func statfs(_ req: fuse_req_t) {
        respond(req) { () throws(Errno) in
            var sv = try fileSystem.statistics()
            fuse_reply_statfs(req, &sv)
        }
    }
}
