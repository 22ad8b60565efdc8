import CFuse
import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

extension FuseAdapter {
    /// A directory needs no handle: each listing request reads from the position it names.
    /// A kernel that can skip OPENDIR (and RELEASEDIR) learns it from an `ENOSYS` here, which
    /// saves two round trips per directory a walker opens; an older one gets no handle.
    func opendir(_ req: fuse_req_t, _ id: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>) {
        if opendirOptional.load(ordering: .acquiring) {
            fuse_reply_err(req, ENOSYS)
            return
        }
        respond(req) { () throws(Errno) in
            guard try node(id).isDirectory else { throw .notDirectory }
            fi.pointee.fh = 0
            fuse_reply_open(req, fi)
        }
    }

    /// Entries from offset `offset` on, names and types only.
    func readdir(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int, _ offset: off_t) {
        fillDirectory(req, id, size, offset) { _, buffer, room, name, item, next in
            var st = stat()
            st.st_ino = ino_t(item.inode)
            st.st_mode = mode_t(item.type) << 12
            return fuse_add_direntry(req, buffer, room, name, &st, next)
        }
    }

    /// Entries with their attributes where the listing advisor expects them to be used
    /// (`ls -l` then needs no lookup per entry), else names and types only, as `readdir`
    /// gives them (node id 0: the kernel takes nothing but the name). Each entry the kernel
    /// takes with a node id counts as a lookup, and a new node against the caller's share:
    /// past half of it, entries go without attributes, leaving room for the lookups.
    func readdirplus(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int, _ offset: off_t) {
        let caller = Self.caller(req)
        let everyEntry = listingAdvisor.beginReply(listing: id, to: caller.pid)
        // A walker opens the subdirectories it is shown: of the entries taken, the
        // directories get their metadata read ahead.
        var shown: [BackingNode] = []
        defer { fileSystem.prefetchDirectoryMetadata(of: shown) }
        fillDirectory(req, id, size, offset) { listing, buffer, room, name, item, next in
            var entry = fuse_entry_param()
            var remembered: fuse_ino_t = 0
            var taken: BackingNode?
            if item.backingName != nil, everyEntry || ListingAdvisor.entryCarriesAttributes(type: item.type),
               inodes.hasRoomForListing(caller.uid),
               let (node, attributes) = try? fileSystem.nodeWithAttributes(of: item, in: listing.directory),
               let kept = try? inodes.rememberKept(node, for: caller.uid) {
                remembered = kept.id
                taken = kept.node
                entry.ino = remembered
                entry.attr = attributes
                entry.attr_timeout = cacheTimeout
                entry.entry_timeout = cacheTimeout
            } else {
                entry.attr.st_ino = ino_t(item.inode)
                entry.attr.st_mode = mode_t(item.type) << 12
            }
            let needed = fuse_add_direntry_plus(req, buffer, room, name, &entry, next)
            if needed > room {
                // Not taken (no room): the kernel will not forget it either.
                if remembered != 0 { inodes.forget(remembered, count: 1) }
            } else if let taken {
                shown.append(taken)
            }
            return needed
        }
    }

    /// Fills one reply buffer from `offset` on with `add`, which returns the size the entry
    /// needs (it is added only if that fits in `room`). Undecodable entries are logged once.
    /// The request that follows a listing that reached the end gets its empty reply at once.
    private func fillDirectory(_ req: fuse_req_t, _ id: fuse_ino_t, _ size: Int, _ offset: off_t,
                               _ add: (DirectoryReader, UnsafeMutablePointer<CChar>, Int, UnsafePointer<CChar>,
                                       VaultFileSystem.ListedEntry, off_t) -> Int) {
        if listingEnds.takeEnd(of: id, at: Int64(offset)) {
            fuse_reply_buf(req, nil, 0)
            return
        }
        respond(req) { () throws(Errno) in
            let listing = try fileSystem.openListing(of: node(id))
            // The reply holds plaintext names: wiped once the kernel has it, as far as it was
            // filled (an entry is only written where it fits).
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
            var used = 0
            defer {
                secureZero(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<used]))
                buffer.deallocate()
            }
            let start = buffer.baseAddress!.assumingMemoryBound(to: CChar.self)
            let directoryInode = listing.directory.identity.inode
            var full = false
            var end = Int64(offset)
            listing.read(from: Int64(offset), undecodable: { name in
                log.damage("undecodable entry \(name) in the backing directory of inode \(directoryInode)")
            }) { item, next in
                let needed = Self.withCString(item.name) { add(listing, start + used, size - used, $0, item, off_t(next)) }
                guard needed <= size - used else {
                    full = true
                    return false
                }
                used += needed
                end = next
                return true
            }
            if !full, used > 0 { listingEnds.reachedEnd(of: id, at: end) }
            fuse_reply_buf(req, start, used)
        }
    }

    func fsyncdir(_ req: fuse_req_t, _ id: fuse_ino_t) {
        respond(req) { () throws(Errno) in
            try node(id).descriptor.syncDirectory()
            fuse_reply_err(req, 0)
        }
    }
}
