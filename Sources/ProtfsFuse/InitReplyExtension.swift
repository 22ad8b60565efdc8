import CFuse
import Glibc

/// INIT flags past bit 31 (the kernel's `flags2`), which libfuse 3.14 cannot ask for: it
/// builds its INIT reply from 32-bit capability words and knows none of them. They are added
/// to that reply as it is written to the kernel, which reads `flags2` whenever the reply
/// carries FUSE_INIT_EXT (set by libfuse when the kernel offered it). A kernel that does not
/// know a flag ignores it.
enum InitReplyExtension {
    /// FUSE_DIRECT_IO_ALLOW_MMAP (protocol 7.39): direct-I/O files may be mapped shared.
    static let directIOAllowMmap: UInt32 = 1 << (36 - 32)
    /// FUSE_NO_EXPORT_SUPPORT (protocol 7.40): no file handles, `name_to_handle_at` answers
    /// EOPNOTSUPP instead of handles that go stale once the kernel forgets the node.
    static let noExportSupport: UInt32 = 1 << (38 - 32)

    /// The flags to ask for at a protocol level.
    static func flags(forProtocolMinor minor: UInt32) -> UInt32 {
        (minor >= 39 ? directIOAllowMmap : 0) | (minor >= 40 ? noExportSupport : 0)
    }

    /// Routes the session's writes to the kernel through `extend` (reads stay plain `read`;
    /// no splice, which protfs refuses anyway), and replies to requests that came through
    /// io_uring back to their ring entry (`FuseTransport`). Call after `fuse_session_mount`.
    static func install(on session: OpaquePointer) -> Bool {
        var io = fuse_custom_io()
        io.writev = { fd, iov, count, userdata in
            if let iov, let userdata {
                let adapter = Unmanaged<FuseAdapter>.fromOpaque(userdata).takeUnretainedValue()
                if let transport = adapter.transport, transport.reply(iov, Int(count)) {
                    return (0 ..< Int(count)).reduce(0) { $0 + iov[$1].iov_len }
                }
                InitReplyExtension.extend(iov, count, for: adapter)
            }
            return Glibc.writev(fd, iov, count)
        }
        io.read = { fd, buffer, count, _ in Glibc.read(fd, buffer, count) }
        return fuse_session_custom_io(session, &io, fuse_session_fd(session)) == 0
    }

    /// Adds the pending flags to the INIT reply: the first reply of its shape, the only one
    /// the kernel can have asked for so far (it sends nothing else before INIT is answered).
    /// The flags are taken by that reply, so later ones (a 64-byte read has the same shape)
    /// are never touched.
    private static func extend(_ iov: UnsafeMutablePointer<iovec>, _ count: Int32, for adapter: FuseAdapter) {
        guard count == 2, iov[0].iov_len == MemoryLayout<fuse_out_header>.size,
              iov[1].iov_len == MemoryLayout<fuse_init_out>.size,
              adapter.pendingInitFlags.load(ordering: .acquiring) | adapter.transportInitFlags.load(ordering: .acquiring) != 0,
              let header = iov[0].iov_base, let body = iov[1].iov_base else { return }
        let extra = adapter.pendingInitFlags.exchange(0, ordering: .acquiringAndReleasing)
            | adapter.transportInitFlags.exchange(0, ordering: .acquiringAndReleasing)
        let reply = body.assumingMemoryBound(to: fuse_init_out.self)
        guard header.load(as: fuse_out_header.self).error == 0, reply.pointee.flags & UInt32(FUSE_INIT_EXT) != 0 else { return }
        reply.pointee.flags2 |= extra
    }
}
