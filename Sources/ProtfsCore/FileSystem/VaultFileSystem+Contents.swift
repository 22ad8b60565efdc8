import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Contents: every call here needs the file's class key (docs/CLASSES.md "content") and runs
/// under the lock controller's shared hold, from the policy check to the end of the crypto.
extension VaultFileSystem {
    /// Creates a regular file of the parent's class and opens it; `attributes` are the new
    /// file's as the mount shows them, for the reply (no further `stat`).
    public func createFile(_ name: [UInt8], in parent: BackingNode, mode: mode_t, caller: Caller,
                           writable: Bool = true) throws(Errno) -> (node: BackingNode, handle: OpenFileHandle, attributes: stat) {
        try creatingFile(name, in: parent, mode: mode, caller: caller) { (node, file, status) throws(Errno) in
            let attributes = try self.attributes(of: node, status: status)
            node.content.state.withLock { state in
                state.file = file
                gainHandle(on: node, &state)
            }
            return (node, OpenFileHandle(node: node, writable: writable), attributes)
        }
    }

    /// Creates an empty regular file of the parent's class without opening it (`mknod`): no
    /// handle will ever be released, so its descriptor and per-file key go at once.
    public func createClosedFile(_ name: [UInt8], in parent: BackingNode, mode: mode_t, caller: Caller) throws(Errno) -> BackingNode {
        try creatingFile(name, in: parent, mode: mode, caller: caller) { node, _, _ in node }
    }

    /// Creates the file and hands it, header and class hint written, to `keep` under the class
    /// policy, with the status of its backing object (taken once everything is written).
    private func creatingFile<R>(_ name: [UInt8], in parent: BackingNode, mode: mode_t, caller: Caller,
                                 _ keep: (BackingNode, EncryptedFile, stat) throws(Errno) -> R) throws(Errno) -> R {
        let protectionClass = try directoryMetadata(of: parent).protectionClass
        return try snapshots.changingNamespace { () throws(Errno) in
            try controller.perform(.create, on: protectionClass) { () throws(Errno) in
                try creatingEntry(name, in: parent) { (stored) throws(Errno) in
                    let file = try EncryptedFile.create(in: parent.descriptor, name: stored, mode: mode & 0o7777,
                                                        protectionClass: protectionClass, keyring: keyring)
                    do throws(Errno) {
                        try ClassHint.write(protectionClass, to: file, keys: keys)
                        let (node, status) = try BackingNode.openWithStatus(stored, in: parent.descriptor)
                        let chowned = try assignOwnership(of: stored, in: parent, to: caller, current: status)
                        node.cachedHeader = file.header
                        return try keep(node, file, chowned ? try node.status() : status)
                    } catch {
                        try? parent.descriptor.removeFile(stored)
                        throw error
                    }
                }
            }
        }
    }

    /// Opens an existing regular file: refused by the class policy, or the shared content
    /// object (one key, one backing descriptor) gains a handle. A first open reads the
    /// header from the descriptor the content then keeps: one open of the backing file.
    public func open(_ node: BackingNode, writable: Bool) throws(Errno) -> OpenFileHandle {
        guard node.isRegularFile else { throw node.isDirectory ? .isDirectory : .io }
        // A descriptor just opened for the header: closed at the end unless a content object took it.
        var fresh: OwnedDescriptor?
        var freshHeader: FileHeader?
        let header: FileHeader
        if let cached = node.cachedHeader {
            header = cached
        } else {
            let descriptor = try openBackingFile(of: node)
            header = try verifiedHeader(of: node, from: descriptor.borrowed)
            fresh = consume descriptor
            freshHeader = header
        }
        try controller.perform(.openExisting, on: header.protectionClass) { () throws(Errno) in
            try node.content.state.withLock { (state) throws(Errno) in
                if state.file == nil {
                    if let freshHeader, let descriptor = fresh.take() {
                        state.file = try EncryptedFile.open(descriptor, header: freshHeader, keyring: keyring)
                    } else {
                        state.file = try openContent(of: node)
                    }
                }
                gainHandle(on: node, &state)
            }
        }
        // Only after an open the lock allowed: a refused one reads nothing ahead.
        siblingReadahead.opened(node)
        return OpenFileHandle(node: node, writable: writable)
    }

    // The set of open files changes with the handle count, under the same content lock and
    // (for a gain) inside the policy hold: a lock's step 3 between the two, or an open
    // racing the last release, would leave a live key outside the set the lock wipes.

    /// Counts one more handle on `node`, whose content lock is held (as `state`).
    private func gainHandle(on node: BackingNode, _ state: inout OpenContent.State) {
        state.handles += 1
        if state.handles == 1 { openFiles.withLock { $0[ObjectIdentifier(node)] = node } }
    }

    /// Counts one handle less; the last one drops the key and leaves the set. True if it was the last.
    private func loseHandle(on node: BackingNode, _ state: inout OpenContent.State) -> Bool {
        state.handles -= 1
        guard state.handles == 0 else { return false }
        state.file = nil
        openFiles.withLock { $0[ObjectIdentifier(node)] = nil }
        return true
    }

    /// The backing file of `node` open for reading and writing (for reading only when the
    /// backing object refuses writes: a daemon that is not root may only read a file its
    /// owner made read-only).
    func openBackingFile(of node: BackingNode) throws(Errno) -> OwnedDescriptor {
        do {
            return try openForIO(node, .readWrite)
        } catch .permissionDenied {
            return try openForIO(node, .readOnly)
        }
    }

    /// Reads the header again and unwraps the key: the caller holds the policy.
    func openContent(of node: BackingNode) throws(Errno) -> EncryptedFile {
        let file = try EncryptedFile.open(openBackingFile(of: node), keyring: keyring)
        node.cachedHeader = file.header
        return file
    }

    /// Runs `body` on the handle's content object under the `useOpenHandle` policy. A
    /// `complete` file's key taken away by a lock is unwrapped again once the policy allows.
    func withContent<R>(of handle: OpenFileHandle, writing: Bool = false,
                        _ body: (EncryptedFile) throws(Errno) -> R) throws(Errno) -> R {
        try controller.perform(.useOpenHandle, on: handle.protectionClass, writing: writing) { () throws(Errno) -> R in
            let file = try handle.node.content.state.withLock { (state) throws(Errno) -> EncryptedFile in
                if let file = state.file { return file }
                let reopened = try openContent(of: handle.node)
                state.file = reopened
                return reopened
            }
            return try reportingDamage(of: handle.node, "contents") { () throws(Errno) -> R in try body(file) }
        }
    }

    /// The lock's step 3 (`ContentKeyHolder`, below): the per-file keys of open files of
    /// `protectionClass` go (closed files keep none). Called with no request in flight.
    public func dropContentKeys(of protectionClass: ProtectionClass) {
        for node in openFiles.withLock({ Array($0.values) }) where node.cachedHeader?.protectionClass == protectionClass {
            node.content.state.withLock { $0.file = nil }
        }
    }

    public func read(_ handle: OpenFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        // The content's descriptor and the node's are the same backing inode: the status
        // the read took for the size tells whether the access time is due.
        let (count, status) = try withContent(of: handle) { (file) throws(Errno) in
            try file.readReturningStatus(into: buffer, at: offset)
        }
        if accessTimes.files { moveAccessTimeIfDue(of: handle.node, status: status) }
        return count
    }

    /// Whether a read of `node` now should move its access time (`relatime`). An open gives
    /// up the kernel's cached pages of such a file, so that the read reaches the daemon.
    public func accessTimeIsDue(of node: BackingNode) -> Bool {
        guard accessTimes.files, let status = try? node.status() else { return false }
        return Self.accessTimeIsDue(status)
    }

    private static func accessTimeIsDue(_ status: stat) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return AccessTimeUpdates.isDue(status, now: now)
    }

    /// Moves the access time of a file just read (`status`: the backing file's, taken by
    /// the read), when due: one byte read through a descriptor without O_NOATIME lets the
    /// backing filesystem move it (setting it with utimensat would move the change time
    /// too). A backing filesystem mounted `noatime` moves nothing.
    func moveAccessTimeIfDue(of node: BackingNode, status: stat) {
        guard Self.accessTimeIsDue(status), let reader = try? node.descriptor.reopen(.readOnly) else { return }
        let descriptor = reader.borrowed
        var byte: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &byte) { try? descriptor.read(into: $0, at: 0) }
    }

    public func write(_ handle: OpenFileHandle, _ data: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        try snapshots.changing(handle.node.identity) { () throws(Errno) in
            try withContent(of: handle, writing: true) { (file) throws(Errno) in try file.write(data, at: offset) }
        }
    }

    public func truncate(_ handle: OpenFileHandle, to size: Int64) throws(Errno) {
        try snapshots.changing(handle.node.identity) { () throws(Errno) in
            try withContent(of: handle, writing: true) { (file) throws(Errno) in try file.truncate(to: size) }
        }
    }

    public func allocate(_ handle: OpenFileHandle, offset: Int64, length: Int64) throws(Errno) {
        try snapshots.changing(handle.node.identity) { () throws(Errno) in
            try withContent(of: handle, writing: true) { (file) throws(Errno) in try file.allocate(offset: offset, length: length) }
        }
    }

    /// `fsync` of a handle: its data was sealed as it was written, so this needs no key and
    /// succeeds even for a `complete` handle after the lock (docs/CLASSES.md). It syncs a copy
    /// of the backing descriptor and holds no reference to the content object: a lock's
    /// step 3 wipes the key at once, however long the disk takes.
    public func sync(_ handle: OpenFileHandle, dataOnly: Bool) throws(Errno) {
        let backing = try handle.node.content.state.withLock { (state) throws(Errno) in try state.file?.backingDescriptorCopy() }
        guard let backing else { return }
        TestDelays.pause(TestDelays.fsync)
        if dataOnly { try backing.borrowed.syncData() } else { try backing.borrowed.sync() }
    }

    /// Truncates a file by path (no handle): the key must be unwrapped, as for an open.
    public func truncate(_ node: BackingNode, to size: Int64) throws(Errno) {
        let handle = try open(node, writable: true)
        defer { release(handle) }
        try truncate(handle, to: size)
    }

    /// Closes a handle; the last one drops the backing descriptor and the per-file key.
    public func release(_ handle: OpenFileHandle) {
        let node = handle.node
        guard node.content.state.withLock({ loseHandle(on: node, &$0) }) else { return }
        if node.cachedHeader?.protectionClass == .completeUnlessOpen { controller.closedWhileLocked(node) }
    }
}

extension VaultFileSystem: ContentKeyHolder {}
