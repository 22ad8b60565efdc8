import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The device key file: 32 random bytes outside the backing directory, the analog of the
/// hardware UID. Losing it loses the vault (class `none` included); reading it is what lets
/// an attacker guess passcodes offline, so it must be private to its owner.
public struct DeviceKeyFile: Sendable, Equatable {
    public static let fileName = "device.key"
    public let path: String

    public init(path: String) { self.path = path }

    /// `/var/lib/protfs/device.key` for root; `$XDG_DATA_HOME/protfs/device.key` (by default
    /// `~/.local/share/protfs/device.key`) for anyone else.
    public static func defaultPath(effectiveUserID: uid_t = geteuid()) -> String {
        if effectiveUserID == 0 { return "/var/lib/protfs/\(fileName)" }
        if let data = environment("XDG_DATA_HOME"), data.hasPrefix("/") { return "\(data)/protfs/\(fileName)" }
        return "\(homeDirectory())/.local/share/protfs/\(fileName)"
    }

    /// The directory holding the key; the vault state files live under it.
    public var directory: String { PathSplit(path).directory }

    /// The largest key file read: a sealed one is well under it.
    static let maximumFileSize = 4096

    /// Reads the key straight into a locked slot, or hands a sealed key file to `sealer`.
    /// Refuses a key that group or others can read or write, a non-regular file, and a file
    /// that is neither exactly 32 bytes nor something `sealer` opens.
    public func load(sealer: (any DeviceKeySealer)? = nil) throws(VaultError) -> LockedKey {
        let file: OwnedDescriptor
        do {
            file = try OwnedDescriptor.open(path: path, [.readOnly, .nonBlocking])
        } catch .noEntry {
            throw .deviceKeyMissing(path: path)
        } catch {
            throw .system(operation: "open device key", path: path, errno: error)
        }
        let fd = file.borrowed
        let st: stat
        do { st = try fd.status() } catch { throw .system(operation: "stat device key", path: path, errno: error) }
        guard st.isRegularFile else { throw .deviceKeyNotRegularFile(path: path) }
        guard st.st_mode & 0o077 == 0 else { throw .deviceKeyInsecure(path: path, mode: UInt32(st.st_mode)) }
        guard st.st_size == off_t(LockedKey.byteCount) else {
            guard let sealer, st.st_size <= off_t(Self.maximumFileSize) else {
                throw .deviceKeyWrongSize(path: path, size: Int(st.st_size))
            }
            var contents = [UInt8](repeating: 0, count: Int(st.st_size))
            do throws(Errno) {
                let n = try contents.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
                contents.removeLast(contents.count - n)
            } catch {
                throw .system(operation: "read device key", path: path, errno: error)
            }
            return try sealer.unseal(contents, path: path)
        }
        let key = try LockedKey.make { (slot) throws(VaultError) in
            let n: Int
            do throws(Errno) { n = try fd.read(into: slot, at: 0) } catch {
                throw .system(operation: "read device key", path: path, errno: error)
            }
            guard n == LockedKey.byteCount else { throw .deviceKeyWrongSize(path: path, size: n) }
        }
        return key
    }

    /// Creates a fresh random key (and its directory, mode 0700), atomically: written to a
    /// temporary name, synced, then renamed into place without replacing an existing key.
    /// With a `sealer`, the file holds the sealed key, never the key.
    public func create(sealer: (any DeviceKeySealer)? = nil) throws(VaultError) -> LockedKey {
        let key = LockedKey.random()
        try install(sealer.map { (sealer) throws(VaultError) in try sealer.seal(key, path: path) }, orKey: key, replacing: false)
        return key
    }

    /// Writes `sealed` (or, when nil, `key` itself) at this path through a synced temporary
    /// file, then renames it into place: over the old file when `replacing`, else only
    /// where there is none.
    func install(_ sealed: [UInt8]?, orKey key: LockedKey, replacing: Bool) throws(VaultError) {
        let split = PathSplit(path)
        try Self.makeDirectories(split.directory)
        let directory: OwnedDescriptor
        do { directory = try OwnedDescriptor.open(path: split.directory, [.readOnly, .directory]) } catch {
            throw .system(operation: "open directory", path: split.directory, errno: error)
        }
        let dir = directory.borrowed
        let temporary = ".\(split.name).tmp.\(getpid())"
        do {
            try OwnedDescriptor.open(temporary, in: dir, [.writeOnly, .create, .exclusive], mode: 0o600).closeAfter { fd throws(Errno) in
                try fd.changeMode(0o600)
                if let sealed {
                    try fd.writeAll(sealed)
                } else {
                    try key.withUnsafeBytes { bytes throws(Errno) in try fd.write(bytes, at: 0) }
                }
                try fd.sync()
            }
        } catch {
            try? dir.removeFile(temporary)
            throw .system(operation: "write device key", path: path, errno: error)
        }
        do {
            try dir.rename(temporary, to: dir, split.name, flags: replacing ? [] : .noReplace)
            try dir.sync()
        } catch {
            try? dir.removeFile(temporary)
            throw .system(operation: "install device key", path: path, errno: error)
        }
    }

    /// Loads the key, or creates it when there is none; `created` tells the caller to warn.
    /// `sealing`: a new key is sealed by `sealer`, and an existing one must be sealed too.
    public func loadOrCreate(sealer: (any DeviceKeySealer)? = nil, sealing: Bool = false) throws(VaultError) -> (key: LockedKey, created: Bool) {
        do throws(VaultError) {
            let key = try load(sealer: sealer)
            if sealing && !isSealed { throw VaultError.deviceKeyNotSealed(path: path) }
            return (key, false)
        } catch .deviceKeyMissing {
            return (try create(sealer: sealing ? sealer : nil), true)
        }
    }

    /// Where `protfs device-key` stages the new key until the keybag that needs it is
    /// written; an open that finds the key not matching tries it (an interrupted move).
    public var pending: DeviceKeyFile { DeviceKeyFile(path: path + ".new") }

    /// Writes `key` (sealed by `sealer` when given) to `pending`, replacing what is there.
    func stagePending(_ key: LockedKey, sealer: (any DeviceKeySealer)?) throws(VaultError) {
        let staged = pending
        try staged.install(sealer.map { (sealer) throws(VaultError) in try sealer.seal(key, path: path) }, orKey: key, replacing: true)
    }

    /// Renames `pending` over this file and syncs the directory.
    func adoptPending() throws(VaultError) {
        let split = PathSplit(path)
        do {
            let directory = try OwnedDescriptor.open(path: split.directory, [.readOnly, .directory])
            try directory.borrowed.rename(PathSplit(pending.path).name, to: directory.borrowed, split.name)
            try directory.borrowed.sync()
        } catch {
            throw .system(operation: "install the new device key", path: path, errno: error)
        }
    }

    /// Whether the file holds a sealed key rather than the key (only a plain key is 32 bytes).
    public var isSealed: Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_size != off_t(LockedKey.byteCount)
    }

    /// `mkdir -p` with mode 0700 for every directory it creates.
    static func makeDirectories(_ path: String) throws(VaultError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            do {
                try FileDescriptor.currentWorkingDirectory.makeDirectory(prefix, mode: 0o700)
            } catch .exists {
                continue
            } catch {
                throw .system(operation: "create directory", path: prefix, errno: error)
            }
        }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let s = String(cString: value)
        return s.isEmpty ? nil : s
    }

    private static func homeDirectory() -> String {
        if let home = environment("HOME") { return home }
        if let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }
}

/// A user-given path cut into its directory and last component (`a/b` -> `a`, `b`;
/// `b` -> `.`, `b`).
struct PathSplit {
    let directory: String
    let name: String

    init(_ path: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        if let slash = trimmed.lastIndex(of: "/") {
            let dir = trimmed[..<slash]
            directory = dir.isEmpty ? "/" : String(dir)
            name = String(trimmed[trimmed.index(after: slash)...])
        } else {
            directory = "."
            name = String(trimmed)
        }
    }
}
