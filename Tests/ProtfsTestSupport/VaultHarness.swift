import Glibc
import ProtfsCore
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// A vault in a temporary directory, driven through `VaultFileSystem` directly: the rules
/// of names, modes, classes, the policy and the lock without FUSE, without root and in
/// milliseconds. Paths are `/`-separated and relative to the vault's root; every call acts
/// as the user running the tests.
///
/// What needs the kernel (its caches, mappings, the requests it makes of its own accord,
/// permission checks) stays with the integration tests, which mount for real.
public final class VaultHarness {
    public static let passcodeText = "harness passcode"

    public let directory: TemporaryDirectory
    public let vault: Vault
    public let controller: LockController
    public let fileSystem: VaultFileSystem
    public let caller = Caller(uid: getuid(), gid: getgid(), pid: getpid())

    /// No kernel, so no page to drop: the lock's other steps run as on a mount.
    private struct NoPageCache: KernelPageCache {
        func dropPages(where selected: (any CachedNode) -> Bool) {}
    }

    /// A new vault whose root has `rootClass`, unlocked or in `beforeFirstUnlock`.
    public convenience init(rootClass: ProtectionClass = .completeUntilFirstUserAuthentication, grace: Duration = .zero,
                            unlocked: Bool = true) throws {
        let directory = TemporaryDirectory()
        _ = try Vault.initialize(backing: directory.child("backing"), protectionClass: rootClass,
                                 deviceKeyPath: directory.child("device.key"),
                                 passcode: { passcode(Self.passcodeText) }, kdf: .interactive)
        try self.init(reopening: directory, grace: grace, unlocked: unlocked)
    }

    /// The vault a harness made in `directory`, opened again as a new mount would (the
    /// harness that made it let go first: the vault is one per backing directory).
    public init(reopening directory: TemporaryDirectory, grace: Duration = .zero, unlocked: Bool = true) throws {
        self.directory = directory
        vault = try Vault.open(backing: directory.child("backing"), deviceKeyPath: directory.child("device.key"))
        if unlocked { try vault.unlock(passcode: passcode(Self.passcodeText)) }
        controller = LockController(vault: vault, initialState: unlocked ? .unlocked : .beforeFirstUnlock,
                                    grace: grace, autolock: .zero)
        fileSystem = try VaultFileSystem(vault: vault, controller: controller)
        controller.attach(contentKeys: fileSystem, cache: NoPageCache())
    }

    /// The same vault through a new `VaultFileSystem`, unlocked: what a remount with the
    /// passcode shows: none of this filesystem's nodes or cached headers in common.
    public func remounted() throws -> VaultHarness {
        if state != .unlocked { try unlock() }
        return try VaultHarness(sharing: self)
    }

    private init(sharing other: VaultHarness) throws {
        directory = other.directory
        vault = other.vault
        controller = other.controller
        fileSystem = try VaultFileSystem(vault: vault, controller: controller)
        controller.attach(contentKeys: fileSystem, cache: NoPageCache())
    }

    /// A vault brought into `state` as the integration tests bring a mount: `prepare` runs
    /// while unlocked, then a lock (with a grace longer than any test for `locking`), or for
    /// `beforeFirstUnlock` the vault opened anew without the passcode.
    public static func inState(_ state: LockState, rootClass: ProtectionClass = .completeUntilFirstUserAuthentication,
                               prepare: (VaultHarness) throws -> Void) throws -> VaultHarness {
        var prepared: VaultHarness? = try VaultHarness(rootClass: rootClass, grace: state == .locking ? .seconds(3600) : .zero)
        try prepare(prepared!)
        switch state {
        case .unlocked: break
        case .locking: prepared!.lock(.normal)
        case .locked: prepared!.lock(.now)
        case .beforeFirstUnlock:
            let directory = prepared!.directory
            prepared = nil
            return try VaultHarness(reopening: directory, unlocked: false)
        }
        return prepared!
    }

    // MARK: paths

    private static func components(_ path: String) -> [[UInt8]] {
        path.split(separator: "/").map { Array($0.utf8) }
    }

    /// The node at `path` ("" is the root), looked up one component at a time.
    public func node(_ path: String) throws(Errno) -> BackingNode {
        var node = fileSystem.root
        for name in Self.components(path) { node = try fileSystem.lookup(name, in: node) }
        return node
    }

    private func parentAndName(_ path: String) throws(Errno) -> (BackingNode, [UInt8]) {
        var names = Self.components(path)
        guard let name = names.popLast() else { throw .invalid }
        var parent = fileSystem.root
        for component in names { parent = try fileSystem.lookup(component, in: parent) }
        return (parent, name)
    }

    // MARK: entries

    /// Creates a regular file holding `contents` and closes it, as the harness's user or as
    /// `caller` (whose it is when the tests run as root).
    @discardableResult
    public func createFile(_ path: String, contents: [UInt8] = [], mode: mode_t = 0o644, by caller: Caller? = nil) throws(Errno) -> BackingNode {
        let (parent, name) = try parentAndName(path)
        let (node, handle, _) = try fileSystem.createFile(name, in: parent, mode: mode, caller: caller ?? self.caller)
        defer { fileSystem.release(handle) }
        if !contents.isEmpty { try write(handle, contents) }
        return node
    }

    /// Makes a directory, of its parent's class or of `protectionClass` (set right after).
    @discardableResult
    public func makeDirectory(_ path: String, mode: mode_t = 0o755, protectionClass: String? = nil) throws(Errno) -> BackingNode {
        let (parent, name) = try parentAndName(path)
        let node = try fileSystem.makeDirectory(name, in: parent, mode: mode, caller: caller)
        if let protectionClass { try setProtectionClass(protectionClass, of: path) }
        return node
    }

    @discardableResult
    public func makeSymlink(_ path: String, target: String) throws(Errno) -> BackingNode {
        let (parent, name) = try parentAndName(path)
        return try fileSystem.makeSymlink(name, in: parent, target: Array(target.utf8), caller: caller)
    }

    public func rename(_ path: String, to newPath: String, flags: FileDescriptor.RenameFlags = []) throws(Errno) {
        let (parent, name) = try parentAndName(path)
        let (newParent, newName) = try parentAndName(newPath)
        try fileSystem.rename(name, in: parent, to: newName, in: newParent, flags: flags)
    }

    /// A hard link `newPath` to the entry at `path`.
    public func link(_ path: String, as newPath: String) throws(Errno) {
        let (newParent, newName) = try parentAndName(newPath)
        try fileSystem.link(try node(path), as: newName, in: newParent)
    }

    /// A FIFO, as `mkfifo` makes it.
    @discardableResult
    public func makeFIFO(_ path: String, mode: mode_t = 0o644) throws(Errno) -> BackingNode {
        let (parent, name) = try parentAndName(path)
        return try fileSystem.makeNode(name, in: parent, mode: S_IFIFO | mode, device: 0, caller: caller)
    }

    public func unlink(_ path: String) throws(Errno) {
        let (parent, name) = try parentAndName(path)
        try fileSystem.unlink(name, in: parent)
    }

    /// The names listed in the directory at `path`, `.` and `..` left out.
    public func list(_ path: String = "") throws(Errno) -> [[UInt8]] {
        let reader = try fileSystem.openListing(of: try node(path))
        var names: [[UInt8]] = []
        reader.read(from: 0, undecodable: { _ in }) { entry, _ in
            if entry.name != Array(".".utf8) && entry.name != Array("..".utf8) { names.append(entry.name) }
            return true
        }
        return names
    }

    // MARK: contents

    public func open(_ path: String, writable: Bool = false) throws(Errno) -> OpenFileHandle {
        try fileSystem.open(try node(path), writable: writable)
    }

    public func release(_ handle: OpenFileHandle) { fileSystem.release(handle) }

    public func read(_ handle: OpenFileHandle, count: Int = 1 << 16, at offset: Int64 = 0) throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = try buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in try fileSystem.read(handle, into: bytes, at: offset) }
        }.get()
        return Array(buffer[..<read])
    }

    public func write(_ handle: OpenFileHandle, _ bytes: [UInt8], at offset: Int64 = 0) throws(Errno) {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try fileSystem.write(handle, raw, at: offset) } }.get()
    }

    /// The whole contents of the file at `path` (at most 64 KiB), opened and closed for it.
    public func contents(of path: String) throws(Errno) -> [UInt8] {
        let handle = try open(path)
        defer { release(handle) }
        return try read(handle)
    }

    // MARK: attributes

    public func attributes(of path: String) throws(Errno) -> stat { try fileSystem.attributes(of: try node(path)) }

    /// The absolute path of the backing object of the entry at `path` (what `protfsctl
    /// backing-path` names, relative to the backing directory).
    public func backingPath(of path: String) throws(Errno) -> String {
        directory.child("backing") + "/" + (try fileSystem.backingRelativePath(of: Self.components(path)))
    }

    /// `getfattr -n user.protfs.class`: the canonical name.
    public func protectionClass(of path: String) throws(Errno) -> String {
        String(decoding: try extendedAttribute(ClassHint.attributeName, of: path), as: UTF8.self)
    }

    /// `setfattr -n user.protfs.class -v SPELLING`, by the harness's user or by `caller`.
    public func setProtectionClass(_ spelling: String, of path: String, by caller: Caller? = nil) throws(Errno) {
        try setExtendedAttribute(ClassHint.attributeName, Array(spelling.utf8), of: path, by: caller)
    }

    public func extendedAttribute(_ name: String, of path: String) throws(Errno) -> [UInt8] {
        try fileSystem.extendedAttribute(Array(name.utf8), of: try node(path))
    }

    public func setExtendedAttribute(_ name: String, _ value: [UInt8], of path: String, by caller: Caller? = nil) throws(Errno) {
        try fileSystem.setExtendedAttribute(Array(name.utf8), value, flags: 0, of: try node(path), caller: caller ?? self.caller)
    }

    public func removeExtendedAttribute(_ name: String, of path: String) throws(Errno) {
        try fileSystem.removeExtendedAttribute(Array(name.utf8), of: try node(path))
    }

    public func extendedAttributeNames(of path: String) throws(Errno) -> [String] {
        try fileSystem.extendedAttributeNames(of: try node(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: the lock

    public var state: LockState { controller.state }

    public func lock(_ request: LockRequest = .now) { controller.lock(request) }

    public func unlock(passcode text: String = VaultHarness.passcodeText) throws(VaultError) {
        try controller.unlock(passcode: passcode(text))
    }
}
