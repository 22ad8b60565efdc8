import CFuse
import Glibc
import ProtfsCore
import ProtfsSystem

extension FuseAdapter {
    func opendir(_ req: fuse_req_t, _ id: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            let directory = try node(id)
            let (entries, undecodable) = try fileSystem.list(directory)
            for name in undecodable { log.damage("undecodable entry \(name) in directory inode \(id)") }
            let listing = DirectoryListing(entries: entries)
            fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(listing).toOpaque()))
            if fuse_reply_open(req, fi) != 0 { dropListing(fi) }
        }
    }

    func dropListing(_ fi: UnsafeMutablePointer<fuse_file_info>) {
        guard let listing = Self.listing(fi) else { return }
        Unmanaged.passUnretained(listing).release()
        fi.pointee.fh = 0
    }

    /// Entries from offset `offset` on; offset n means "after the n-th entry", with `.` and
    /// `..` first.
    func readdir(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int, _ offset: off_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        respond(req) { () throws(Errno) in
            guard let listing = Self.listing(fi) else { throw .badFile }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            var used = 0
            let all: [(name: [UInt8], inode: UInt64, type: UInt8)] =
                [(Array(".".utf8), 0, UInt8(DT_DIR)), (Array("..".utf8), 0, UInt8(DT_DIR))]
                + listing.entries.map { ($0.name, $0.inode, $0.type) }
            var index = Int(offset)
            while index < all.count {
                var st = stat()
                st.st_ino = ino_t(all[index].inode)
                st.st_mode = mode_t(all[index].type) << 12
                var cName = all[index].name
                cName.append(0)
                let needed = cName.withUnsafeBufferPointer { p in
                    p.withMemoryRebound(to: CChar.self) {
                        fuse_add_direntry(req, buffer + used, size - used, $0.baseAddress!, &st, off_t(index + 1))
                    }
                }
                if needed > size - used { break }
                used += needed
                index += 1
            }
            fuse_reply_buf(req, buffer, used)
        }
    }

    func releasedir(_ req: fuse_req_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        dropListing(fi)
        fuse_reply_err(req, 0)
    }

    func fsyncdir(_ req: fuse_req_t, _ id: fuse_ino_t) {
        respond(req) { () throws(Errno) in
            try node(id).descriptor.syncDirectory()
            fuse_reply_err(req, 0)
        }
    }
}
