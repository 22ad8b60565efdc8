import CFuse
import Glibc

/// The C table of low-level operations. Each entry is a non-capturing closure that finds the
/// adapter through the session's userdata and forwards the request.
enum LowLevelOperations {
    /// The largest read or write request: 256 chunks, the unit the crypto spreads over cores.
    static let maxRequestBytes = 1 << 20
    /// How far the kernel reads ahead of a sequential reader: four requests, so that while
    /// one is decrypted on both cores the next ones already wait on the backing disk. With
    /// one request's worth the disk idled during the crypto; eight requests were no better
    /// than four.
    static let readaheadBytes = 4 * maxRequestBytes

    static func make() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, conn in
            guard let conn else { return }
            let adapter = userdata.map { Unmanaged<FuseAdapter>.fromOpaque($0).takeUnretainedValue() }
            // A listing needs no open handle (every request reads from the position it names),
            // so a kernel that can skip OPENDIR and RELEASEDIR is told so by the first one.
            if conn.pointee.capable & UInt32(FUSE_CAP_NO_OPENDIR_SUPPORT) != 0 {
                adapter?.opendirOptional.store(true, ordering: .releasing)
            }
            // Never the writeback cache (a write accepted into the page cache after the lock's
            // write-out would be lost) and no splice (plaintext would sit in pipe pages).
            let refused = UInt32(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE
                                 | FUSE_CAP_SPLICE_MOVE | FUSE_CAP_NO_OPEN_SUPPORT
                                 | FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_POSIX_ACL | FUSE_CAP_HANDLE_KILLPRIV)
            conn.pointee.want &= ~refused
            // Symlink targets kept in the kernel's page cache: a path through a symlink then
            // costs no READLINK. A target never changes in place (a rename seals it anew with
            // the same plaintext, under the same node), and reading one needs no class key.
            conn.pointee.want |= conn.pointee.capable & UInt32(FUSE_CAP_CACHE_SYMLINKS)
            // Always READDIRPLUS, never the kernel's guess: it sends plain READDIR after the
            // first buffer of a directory, and `du`/`find -size` then pay one LOOKUP per entry.
            conn.pointee.want &= ~UInt32(FUSE_CAP_READDIRPLUS_AUTO)
            // Cached pages are dropped where contents change behind them (a lock, a direct-I/O
            // write), not whenever a file's mtime moves: with the kernel's automatic check a
            // file read back after it was written, or a cached file touched, lost its pages.
            // Kernels before protocol 7.39 (Linux 6.6) do not drop the pages a direct-I/O
            // write covers, so they keep the check, and no open gets direct I/O.
            if conn.pointee.proto_minor >= 39 {
                conn.pointee.want &= ~UInt32(FUSE_CAP_AUTO_INVAL_DATA)
                adapter?.directIOCoherent.store(true, ordering: .releasing)
            }
            adapter?.pendingInitFlags.store(InitReplyExtension.flags(forProtocolMinor: conn.pointee.proto_minor),
                                            ordering: .releasing)
            conn.pointee.max_write = UInt32(LowLevelOperations.maxRequestBytes)
            conn.pointee.max_readahead = UInt32(LowLevelOperations.readaheadBytes)
        }
        ops.lookup = { req, parent, name in FuseAdapter.from(req!).lookup(req!, parent, name!) }
        ops.forget = { req, ino, count in FuseAdapter.from(req!, countsAsActivity: false).forget(req!, ino, count) }
        ops.forget_multi = { req, count, items in FuseAdapter.from(req!, countsAsActivity: false).forgetMany(req!, count, items!) }
        ops.getattr = { req, ino, _ in FuseAdapter.from(req!).getattr(req!, ino) }
        ops.setattr = { req, ino, attr, toSet, fi in FuseAdapter.from(req!).setattr(req!, ino, attr!, toSet, fi) }
        ops.readlink = { req, ino in FuseAdapter.from(req!).readlink(req!, ino) }
        ops.mknod = { req, parent, name, mode, rdev in FuseAdapter.from(req!).mknod(req!, parent, name!, mode, rdev) }
        ops.mkdir = { req, parent, name, mode in FuseAdapter.from(req!).mkdir(req!, parent, name!, mode) }
        ops.unlink = { req, parent, name in FuseAdapter.from(req!).unlink(req!, parent, name!) }
        ops.rmdir = { req, parent, name in FuseAdapter.from(req!).rmdir(req!, parent, name!) }
        ops.symlink = { req, target, parent, name in FuseAdapter.from(req!).symlink(req!, target!, parent, name!) }
        ops.rename = { req, parent, name, newParent, newName, flags in
            FuseAdapter.from(req!).rename(req!, parent, name!, newParent, newName!, flags)
        }
        ops.link = { req, ino, newParent, newName in FuseAdapter.from(req!).link(req!, ino, newParent, newName!) }
        ops.open = { req, ino, fi in FuseAdapter.from(req!).open(req!, ino, fi!) }
        ops.create = { req, parent, name, mode, fi in FuseAdapter.from(req!).create(req!, parent, name!, mode, fi!) }
        ops.read = { req, _, size, offset, fi in FuseAdapter.from(req!).read(req!, size, offset, fi!) }
        ops.write = { req, ino, data, size, offset, fi in FuseAdapter.from(req!).write(req!, ino, data!, size, offset, fi!) }
        ops.flush = { req, _, _ in FuseAdapter.from(req!).flush(req!) }
        ops.release = { req, _, fi in FuseAdapter.from(req!).release(req!, fi!) }
        ops.fsync = { req, _, dataOnly, fi in FuseAdapter.from(req!).fsync(req!, dataOnly, fi!) }
        ops.fallocate = { req, _, mode, offset, length, fi in
            FuseAdapter.from(req!).fallocate(req!, mode, offset, length, fi!)
        }
        ops.opendir = { req, ino, fi in FuseAdapter.from(req!).opendir(req!, ino, fi!) }
        ops.readdir = { req, id, size, offset, _ in FuseAdapter.from(req!).readdir(req!, id, size, offset) }
        ops.readdirplus = { req, id, size, offset, _ in FuseAdapter.from(req!).readdirplus(req!, id, size, offset) }
        ops.fsyncdir = { req, ino, _, _ in FuseAdapter.from(req!).fsyncdir(req!, ino) }
        ops.statfs = { req, _ in FuseAdapter.from(req!, countsAsActivity: false).statfs(req!) }
        ops.setxattr = { req, ino, name, value, size, flags in
            FuseAdapter.from(req!).setxattr(req!, ino, name!, value, size, flags)
        }
        ops.getxattr = { req, ino, name, size in FuseAdapter.from(req!).getxattr(req!, ino, name!, size) }
        ops.listxattr = { req, ino, size in FuseAdapter.from(req!).listxattr(req!, ino, size) }
        ops.removexattr = { req, ino, name in FuseAdapter.from(req!).removexattr(req!, ino, name!) }
        return ops
    }
}
