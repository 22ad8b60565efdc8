import ProtfsDomain
import CFuse
import CProtfsSys
import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsLog
import ProtfsSystem
import Synchronization

/// Translates low-level FUSE requests into `VaultFileSystem` calls and replies. It holds no
/// crypto or format logic: node ids, handles and reply encoding only.
public final class FuseAdapter: Sendable {
    public let fileSystem: VaultFileSystem
    let inodes: InodeTable
    /// How long the kernel may cache attributes and names: every change goes through this
    /// daemon, and the lock controller invalidates what the lock must take away.
    let cacheTimeout: Double
    let log: DaemonLog
    /// The session's address once mounted (0 before and after): the target of cache
    /// invalidations.
    let sessionAddress = Atomic<UInt>(0)

    var session: OpaquePointer? { OpaquePointer(bitPattern: sessionAddress.load(ordering: .acquiring)) }

    /// Asks the kernel to forget little-used nodes when their descriptors run short.
    let pruner: InodePruner
    /// The open handles each bounded uid holds (`DescriptorShares.handles`).
    let handleHolders: Mutex<ShareLedger>
    /// The uids never refused a share (root, the vault's owner).
    let privilege: MountPrivilege
    /// Requests of bounded uids waiting for room now (`waitForRoom`).
    let roomWaiters = Atomic<Int>(0)
    /// Which entries of a listing carry their attributes.
    let listingAdvisor = ListingAdvisor()
    /// Where listings reached the end (the request that follows is answered at once).
    let listingEnds = ListingEnds(clock: MonotonicClock.nanoseconds)
    /// Whether the kernel can do without OPENDIR (told so by an `ENOSYS` to the first).
    let opendirOptional = Atomic<Bool>(false)
    /// Whether direct I/O stays coherent with the page cache (protocol 7.39, Linux 6.6, on):
    /// the kernel drops the cached pages a direct-I/O write covers, and maps direct-I/O files
    /// (FUSE_DIRECT_IO_ALLOW_MMAP, asked for at INIT). Set at INIT; write-only and O_DIRECT
    /// opens get direct I/O only then.
    let directIOCoherent = Atomic<Bool>(false)
    /// INIT flags past bit 31, decided at INIT and added to libfuse's reply on its way out
    /// (`InitReplyExtension`).
    let pendingInitFlags = Atomic<UInt32>(0)
    /// INIT flags past bit 31 the transport asks for (`FuseTransport`: FUSE over io_uring).
    let transportInitFlags = Atomic<UInt32>(0)
    /// The session's transport while one besides /dev/fuse serves (0 otherwise): where replies go.
    let transportAddress = Atomic<UInt>(0)

    var transport: TransportChoice? {
        let address = transportAddress.load(ordering: .acquiring)
        guard address != 0 else { return nil }
        return Unmanaged<TransportChoice>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
    }

    /// `shares`: of this process's descriptors, what the node table may hold and what each
    /// uid may pin; `privilege`: the uids never refused for it.
    public init(fileSystem: VaultFileSystem, log: DaemonLog, cacheTimeout: Double = 30,
                shares: DescriptorShares = .ofThisProcess(), privilege: MountPrivilege) {
        self.fileSystem = fileSystem
        self.log = log
        self.cacheTimeout = cacheTimeout
        self.privilege = privilege
        pruner = InodePruner(capacity: shares.nodeCapacity)
        inodes = InodeTable(root: fileSystem.root, capacity: shares.nodeCapacity, ceiling: shares.nodeCeiling,
                            shares: shares.nodes, privilege: privilege)
        handleHolders = Mutex(ShareLedger(shares.handles, privilege: privilege))
        inodes.whenCrowded { [unowned self] uid in
            if let uid { pruner.crowded(self, by: uid) } else { pruner.crowded(self) }
        }
    }

    /// The adapter of a request. Requests count as activity for auto-lock, except the
    /// kernel's own housekeeping (`forget` when it evicts its caches, as `drop_caches` or
    /// memory pressure do) and `statfs` (every `df` on the machine sends one): neither is
    /// anybody using the vault.
    static func from(_ req: fuse_req_t, countsAsActivity: Bool = true) -> FuseAdapter {
        let adapter = Unmanaged<FuseAdapter>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
        if countsAsActivity { adapter.fileSystem.controller.noteActivity() }
        return adapter
    }

    // MARK: request plumbing

    func node(_ id: fuse_ino_t) throws(Errno) -> BackingNode {
        guard let node = inodes.node(id) else { throw .noEntry }
        return node
    }

    static func caller(_ req: fuse_req_t) -> Caller {
        let ctx = fuse_req_ctx(req)!.pointee
        return Caller(uid: ctx.uid, gid: ctx.gid, pid: ctx.pid)
    }

    static func name(_ cName: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: cName, count: strlen(cName)))
    }

    /// Calls `body` with `bytes` as a NUL-terminated C string in scratch memory that is
    /// wiped afterwards (plaintext names and symlink targets on their way to a reply).
    static func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: bytes.count + 1, alignment: 1) { scratch in
            defer { secureZero(scratch) }
            scratch.copyBytes(from: bytes)
            scratch[bytes.count] = 0
            return body(scratch.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
    }

    /// Runs a handler; an `Errno` it throws becomes the reply. Out of descriptors, the node
    /// table is pruned too.
    func respond(_ req: fuse_req_t, _ body: () throws(Errno) -> Void) {
        do {
            try body()
        } catch {
            if error == .tooManyOpenFiles { pruner.crowded(self) }
            fuse_reply_err(req, error.rawValue)
        }
    }

    /// Refuses a request that would create a node its uid has no room for, before anything
    /// is created (the node is counted when the reply names it).
    func checkRoomForNode(_ req: fuse_req_t) throws(Errno) {
        let uid = Self.caller(req).uid
        guard inodes.admits(uid) || waitForRoom(for: uid) else { throw .tooManyOpenFiles }
    }

    /// The longest a request of a uid at its share of nodes waits for the pruner to free some.
    static let roomWait = Duration.milliseconds(100)
    /// Requests of bounded uids that may wait for room at once, of the request loop's 16
    /// workers: a user whose nodes are pinned (the pruner sends them, the kernel keeps them)
    /// makes each of its requests wait, and must not hold every worker that way.
    static let maximumRoomWaiters = 4

    /// Waits, up to `roomWait`, while the pruner frees room for `uid` (the kernel's FORGETs
    /// of its least used nodes): a user walking a large directory waits a moment instead of
    /// failing; one whose nodes are all in use is refused at once. True once there is room.
    func waitForRoom(for uid: uid_t) -> Bool {
        if !privilege.isPrivileged(uid) {
            guard roomWaiters.add(1, ordering: .relaxed).newValue <= Self.maximumRoomWaiters else {
                roomWaiters.subtract(1, ordering: .relaxed)
                return false
            }
        }
        defer { if !privilege.isPrivileged(uid) { roomWaiters.subtract(1, ordering: .relaxed) } }
        let deadline = MonotonicClock.nanoseconds(after: Self.roomWait)
        // Room comes from the whole table's rounds when it is full, else from the uid's own.
        while pruner.mayFreeRoom(for: inodes.isFull ? nil : uid), MonotonicClock.nanoseconds() < deadline {
            usleep(1000)
            if inodes.admits(uid) { return true }
        }
        return false
    }

    /// `inodes.remember` for `uid`, which may wait for room (`waitForRoom`).
    func remember(_ node: BackingNode, for uid: uid_t) throws(Errno) -> fuse_ino_t {
        do throws(Errno) { return try inodes.remember(node, for: uid) } catch {
            guard waitForRoom(for: uid) else { throw error }
            return try inodes.remember(node, for: uid)
        }
    }

    /// Replies with `node`'s entry; `attributes`, when the caller has them already, spare
    /// an `fstat`.
    func replyEntry(_ req: fuse_req_t, _ node: BackingNode, attributes known: stat? = nil) throws(Errno) {
        let attributes: stat
        if let known { attributes = known } else { attributes = try fileSystem.attributes(of: node) }
        let id = try remember(node, for: Self.caller(req).uid)
        var entry = fuse_entry_param()
        entry.ino = id
        entry.attr = attributes
        entry.attr_timeout = cacheTimeout
        entry.entry_timeout = cacheTimeout
        // If the kernel did not take the entry (interrupted), it will not forget it either.
        if fuse_reply_entry(req, &entry) != 0 { inodes.forget(id, count: 1) }
    }

    func replyAttributes(_ req: fuse_req_t, _ attributes: stat) {
        var st = attributes
        fuse_reply_attr(req, &st, cacheTimeout)
    }

    static func handle(_ fi: UnsafeMutablePointer<fuse_file_info>?) -> OpenFileHandle? { heldHandle(fi)?.handle }

    static func heldHandle(_ fi: UnsafeMutablePointer<fuse_file_info>?) -> HeldHandle? {
        guard let fi, fi.pointee.fh != 0 else { return nil }
        return Unmanaged<HeldHandle>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(fi.pointee.fh))!).takeUnretainedValue()
    }

    /// Runs `body` (an open) with one more handle counted for `uid`, or refuses it with
    /// `EMFILE` past its share: each handle holds a backing descriptor and keeps its node's.
    /// An open that fails gives the share back.
    func withHandleShare<R>(for uid: uid_t, _ body: () throws(Errno) -> R) throws(Errno) -> R {
        guard handleHolders.withLock({ $0.take(for: uid) }) else { throw .tooManyOpenFiles }
        do throws(Errno) { return try body() } catch {
            giveBackHandleShare(for: uid)
            throw error
        }
    }

    func giveBackHandleShare(for uid: uid_t) {
        handleHolders.withLock { $0.giveBack(for: uid) }
    }

    /// Hands a handle to the kernel: it comes back in `fi.fh` until `release`. It counts
    /// against `holder` (`takeHandleShare`) until then.
    func store(_ handle: OpenFileHandle, holder: uid_t, in fi: UnsafeMutablePointer<fuse_file_info>) {
        let held = HeldHandle(handle: handle, holder: holder)
        fi.pointee.fh = UInt64(UInt(bitPattern: Unmanaged.passRetained(held).toOpaque()))
        // Pages stay valid across opens: every write goes through this daemon, and the lock
        // controller drops them explicitly when a class key goes.
        fi.pointee.keep_cache = 1
        // Data is sealed as it is written, so `close` has nothing to flush: the kernel can
        // skip the FLUSH round trip (two per `echo > file`).
        fi.pointee.noflush = 1
        // Direct I/O (FOPEN_DIRECT_IO) sends reads and writes straight here. The kernel then
        // does not ask for `security.capability` before every write, as it does through the
        // page cache: a round trip per write(2), many of an untar's requests. In exchange
        // nothing of the handle's data is cached. So it is for O_DIRECT opens (random writes
        // gain the most) and for write-only ones, which could not be mapped or read anyway,
        // once the kernel keeps direct I/O coherent: it drops what other descriptors cached
        // of a range written, and maps direct-I/O files shared (an O_DIRECT descriptor must
        // map: without FUSE_DIRECT_IO_ALLOW_MMAP, mmap says ENODEV).
        // Older kernels do O_DIRECT through the page cache's direct path, coherent too.
        if bypassesPageCache(openFlags: fi.pointee.flags) {
            fi.pointee.direct_io = 1
        } else {
            handle.node.openedThroughPageCache.store(true, ordering: .relaxed)
        }
    }

    /// Whether a descriptor opened with `openFlags` gets direct I/O (see `store`).
    func bypassesPageCache(openFlags flags: Int32) -> Bool {
        directIOCoherent.load(ordering: .acquiring) && (flags & protfs_O_DIRECT != 0 || flags & O_ACCMODE == O_WRONLY)
    }
}

/// An open handle as the kernel holds it (`fi.fh`): the vault's handle, and the uid whose
/// share of handles it counts against.
final class HeldHandle: Sendable {
    let handle: OpenFileHandle
    let holder: uid_t

    init(handle: OpenFileHandle, holder: uid_t) {
        self.handle = handle
        self.holder = holder
    }
}
