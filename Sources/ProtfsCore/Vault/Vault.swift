import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// An opened backing directory: its exclusive lock, its keys, its root metadata, and the
/// passcode operations (unlock, change) behind the wrong-passcode delays. One per process
/// and backing directory (the `flock` makes it one per machine).
public final class Vault: Sendable {
    /// How long `open` and `initialize` wait for another process to release the backing
    /// directory (docs/FORMAT.md: a daemon being unmounted may still be exiting).
    public static let lockTimeout = Duration.seconds(5)

    public let backingPath: String
    /// `O_RDONLY|O_DIRECTORY` on the backing root; it holds the `flock` until the vault is
    /// released.
    private let root: OwnedDescriptor
    public var backingRoot: FileDescriptor { root.borrowed }
    public let deviceKeyFile: DeviceKeyFile
    /// What opens a sealed device key file (and, for a vault whose passcode the TPM counts,
    /// its passcode secret); nil where no hardware is wired in.
    public let sealer: (any DeviceKeySealer)?
    /// The recovery key standing in for the TPM (`protfs device-key --recovery-key-file`):
    /// it opens the device key and the passcode secret instead; nil otherwise.
    let recovery: RecoveryKey?
    /// The vault's first device key, which file headers and device-bound items are keyed
    /// with: the device key itself until `moveDeviceKey` replaces it.
    let originKey: LockedKey
    public let vaultID: ObjectID
    /// The class keys in memory; `none` is installed at open, the others by `unlock`.
    public let keyring: ClassKeyring
    public let filesystemKeys: FilesystemKeys
    public let rootMetadata: DirectoryMetadata
    /// Things fixed on the way in (a backing root looser than 0700), for the caller to show.
    public let warnings: [String]

    struct PasscodeRecord {
        var keybag: Keybag
        var state: VaultState
    }
    /// Held for a whole passcode attempt (Argon2id included), so concurrent attempts cannot
    /// slip past the delays and a `passwd` cannot interleave with an unlock.
    let passcodeRecord: Mutex<PasscodeRecord>
    /// The keybag's `passcodeSet`, outside `passcodeRecord`: the item store reads it under its
    /// own lock, which a passcode removal takes while holding this one.
    private let hasPasscode: Atomic<Bool>
    /// The keybag's `passcodeCountedByHardware`, for status without the passcode lock.
    private let countedByHardware: Atomic<Bool>
    public var passcodeCountedByHardware: Bool { countedByHardware.load(ordering: .acquiring) }

    private init(backingPath: String, backingRoot: consuming OwnedDescriptor, deviceKeyFile: DeviceKeyFile,
                 sealer: (any DeviceKeySealer)?, recovery: RecoveryKey?, originKey: LockedKey, keyring: ClassKeyring,
                 filesystemKeys: FilesystemKeys, rootMetadata: DirectoryMetadata, warnings: [String],
                 keybag: Keybag, state: VaultState) {
        self.backingPath = backingPath
        root = backingRoot
        self.deviceKeyFile = deviceKeyFile
        self.sealer = sealer
        self.recovery = recovery
        self.originKey = originKey
        vaultID = keybag.vaultID
        self.keyring = keyring
        self.filesystemKeys = filesystemKeys
        self.rootMetadata = rootMetadata
        self.warnings = warnings
        passcodeRecord = Mutex(PasscodeRecord(keybag: keybag, state: state))
        hasPasscode = Atomic(keybag.passcodeSet)
        countedByHardware = Atomic(keybag.passcodeCountedByHardware)
    }

    // MARK: opening

    /// Opens and locks a backing directory, loads the device key and the keybag (with every
    /// check of FORMAT.md), and makes the keys that need no passcode. A sealed device key file
    /// is opened by `sealer`, or (with `recovery`) by the recovery seals without it.
    public static func open(backing: String, deviceKeyPath: String?, sealer: (any DeviceKeySealer)? = nil,
                            recovery: RecoveryKey? = nil) throws(VaultError) -> Vault {
        try open(backing: backing, deviceKeyPath: deviceKeyPath, sealer: sealer, recovery: recovery, lockTimeout: lockTimeout)
    }

    static func open(backing: String, deviceKeyPath: String?, sealer: (any DeviceKeySealer)? = nil, recovery: RecoveryKey? = nil,
                     lockTimeout: Duration) throws(VaultError) -> Vault {
        let owned = try openBackingRoot(backing)
        let root = owned.borrowed
        try lockExclusively(root, path: backing, timeout: lockTimeout)
        // Only a directory that holds a keybag is ours to re-mode.
        let bytes = try VaultError.keybag { () throws(KeybagError) in try Keybag.readBytes(in: root, backingPath: backing) }
        let warnings = try tightenMode(root, path: backing)
        try checkExtendedAttributes(root, path: backing)
        let deviceKeyFile = DeviceKeyFile(path: deviceKeyPath ?? DeviceKeyFile.defaultPath())
        let (keybag, deviceKeys, originKey) = try openKeybag(bytes, root: root, backingPath: backing, deviceKeyFile: deviceKeyFile,
                                                             sealer: sealer, recovery: recovery)
        var state = try VaultState.load(beside: deviceKeyFile, vaultID: keybag.vaultID)
        try keybag.admit(into: &state)
        let filesystemKeys = FilesystemKeys(filesystemKey: try VaultError.keybag { () throws(KeybagError) in
            try keybag.unwrapFilesystemKey(deviceKeys: deviceKeys)
        })
        let keyring = ClassKeyring(vaultID: keybag.vaultID, deviceKeys: deviceKeys, classBPublicKey: keybag.classBPublicKey,
                                   contentAEAD: keybag.contentAEAD)
        keyring.install(try VaultError.keybag { () throws(KeybagError) in try keybag.unwrapNoneKey(deviceKeys: deviceKeys) },
                        for: .none)
        let rootMetadata: DirectoryMetadata
        do { rootMetadata = try DirectoryMetadata.read(in: root, vaultID: keybag.vaultID, keys: filesystemKeys) } catch {
            throw .rootMetadataDamaged
        }
        return Vault(backingPath: backing, backingRoot: owned, deviceKeyFile: deviceKeyFile, sealer: sealer, recovery: recovery,
                     originKey: originKey,
                     keyring: keyring,
                     filesystemKeys: filesystemKeys, rootMetadata: rootMetadata, warnings: warnings,
                     keybag: keybag, state: state)
    }

    // MARK: passcodes

    /// False for a vault made with `init --no-passcode` or whose passcode was removed: its
    /// class keys open with the device key alone (docs/BACKUP.md).
    public var passcodeSet: Bool { hasPasscode.load(ordering: .acquiring) }

    /// What the vault's file contents are sealed with, from its keybag (`init --cipher`).
    public var contentAEAD: ContentAEAD { keyring.contentAEAD }

    /// The shared counter as its file holds it now (another process of the vault may have
    /// counted since).
    public var failedAttempts: Int { passcodeRecord.withLock { $0.state.refreshed().failedAttempts } }

    /// Seconds before a passcode attempt is accepted again; nil when one would be now.
    public var retryAfterSeconds: Int? { passcodeRecord.withLock { $0.state.refreshed().retryAfterSeconds() } }

    public var generation: UInt64 { passcodeRecord.withLock { $0.keybag.generation } }

    /// The wrong-passcode record was missing when last read: passcodes are refused.
    public var stateIsMissing: Bool { passcodeRecord.withLock { $0.state.isMissing } }

    public var statePath: String { passcodeRecord.withLock { $0.state.path } }

    /// `fsck --repair`: re-creates a missing wrong-passcode record (`VaultState.recreate`);
    /// its path when it did, nil when the record exists.
    public func recreateMissingState() throws(VaultError) -> String? {
        try passcodeRecord.withLock { (record) throws(VaultError) in
            try record.state.recreate(generation: record.keybag.generation) ? record.state.path : nil
        }
    }

    /// Checks the passcode (through the delays) and installs the `complete`,
    /// `completeUntilFirstUserAuthentication` and `completeUnlessOpen` private keys.
    public func unlock(passcode: SecureBuffer) throws(VaultError) {
        install(try verifyPasscode(passcode))
    }

    /// Checks the passcode (through the delays) and returns the class keys it opens, without
    /// installing them: the lock controller installs them at the moment it changes state.
    public func verifyPasscode(_ passcode: SecureBuffer) throws(VaultError) -> PasscodeClassKeys {
        try passcodeRecord.withLock { (record) throws(VaultError) in
            try verify(passcode, record: &record)
        }
    }

    /// The class keys of a vault without a passcode (no delay: there is nothing to guess).
    public func classKeysWithoutPasscode() throws(VaultError) -> PasscodeClassKeys {
        let deviceKeys = keyring.deviceKeys
        return try passcodeRecord.withLock { (record) throws(VaultError) in
            try VaultError.keybag { () throws(KeybagError) in try record.keybag.unlockWithoutPasscode(deviceKeys: deviceKeys) }
        }
    }

    /// Every key of the vault, for a backup: the class keys the passcode (or the device)
    /// opened, with the filesystem and `none` keys and what the keybag says in the clear.
    public func exportKeys(classKeys: PasscodeClassKeys) throws(VaultError) -> VaultKeys {
        let deviceKeys = keyring.deviceKeys
        return try passcodeRecord.withLock { (record) throws(VaultError) in
            try VaultError.keybag { () throws(KeybagError) in
                VaultKeys(vaultID: vaultID, kdf: record.keybag.kdf, classBPublicKey: record.keybag.classBPublicKey,
                          filesystem: try record.keybag.unwrapFilesystemKey(deviceKeys: deviceKeys),
                          none: try record.keybag.unwrapNoneKey(deviceKeys: deviceKeys), classKeys: classKeys,
                          contentAEAD: record.keybag.contentAEAD)
            }
        }
    }

    public func install(_ keys: PasscodeClassKeys) {
        keyring.install(keys.complete, for: .complete)
        keyring.install(keys.completeUntilFirstUserAuthentication, for: .completeUntilFirstUserAuthentication)
        keyring.install(keys.completeUnlessOpenPrivate, for: .completeUnlessOpen)
    }

    /// `passwd`: checks `old` (through the delays), then rewrites the keybag under `new` with
    /// the next generation and records it. `old` nil sets a passcode on a vault without one;
    /// `new` nil removes the passcode. The lock state and the keyring are unchanged.
    public func changePasscode(old: SecureBuffer?, new: SecureBuffer?) throws(VaultError) {
        let deviceKeys = keyring.deviceKeys
        try passcodeRecord.withLock { (record) throws(VaultError) in
            let keys: PasscodeClassKeys
            if let old { keys = try verify(old, record: &record) } else {
                keys = try VaultError.keybag { () throws(KeybagError) in
                    try record.keybag.unlockWithoutPasscode(deviceKeys: deviceKeys)
                }
            }
            let sealing = sealer.flatMap { countsPasscodesInHardware ? PasscodeSecretSealing($0) : nil }
            let changed = try VaultError.keybag { () throws(KeybagError) in
                try record.keybag.changingPasscode(to: new, classKeys: keys, deviceKeys: deviceKeys, sealing: sealing?.seal)
            }
            // The new passcode seal before the keybag that needs it; keybag before the state:
            // a crash before the state is written leaves a newer keybag, which the next open
            // records; the other order would look like a rollback.
            try sealing?.write(in: backingRoot, generation: changed.generation, backingPath: backingPath)
            try VaultError.keybag { () throws(KeybagError) in try changed.write(in: backingRoot, backingPath: backingPath) }
            PasscodeSealFile.removeAll(in: backingRoot, except: changed.passcodeCountedByHardware ? changed.generation : nil)
            record.keybag = changed
            hasPasscode.store(changed.passcodeSet, ordering: .releasing)
            countedByHardware.store(changed.passcodeCountedByHardware, ordering: .releasing)
            try record.state.record(generation: changed.generation)
        }
    }

    /// docs/CONTROL.md: refused during a delay; counted and synced before Argon2id; reset once
    /// the passcode is known to be right.
    /// The daemon's delays stay in front of the TPM's: the attempt is counted here before
    /// Argon2id runs and before the TPM is asked.
    func verify(_ passcode: SecureBuffer, record: inout PasscodeRecord) throws(VaultError) -> PasscodeClassKeys {
        guard record.keybag.passcodeSet else { throw .noPasscodeSet }
        try record.state.beginPasscodeAttempt()
        let keys: PasscodeClassKeys?
        do {
            keys = try Self.openPasscodeEntries(passcode, keybag: record.keybag, deviceKeys: keyring.deviceKeys, sealer: sealer,
                                                recovery: recovery, root: backingRoot, backingPath: backingPath)
        } catch .keybagDamaged(let reason) {
            // Damage is only reported once the passcode has opened its first entry.
            try record.state.recordSuccess()
            throw .keybagDamaged(reason: reason)
        }
        guard let keys else { throw .wrongPasscode(failedAttempts: record.state.failedAttempts) }
        try record.state.recordSuccess()
        return keys
    }

    // MARK: initialising

    /// What `initialize` did, for `protfs init` to report.
    public struct Initialization: Sendable {
        public let vaultID: ObjectID
        public let rootClass: ProtectionClass
        public let deviceKeyPath: String
        public let contentAEAD: ContentAEAD
        /// True when `init` made a new device key: the command says, once, that losing it
        /// loses the vault, class `none` included.
        public let deviceKeyCreated: Bool
    }

    /// `protfs init`: makes `backing` (if missing) a new vault whose root has
    /// `protectionClass`, without a passcode when `passcode` gives nil, its files sealed with
    /// `contentAEAD` (by default the one this CPU runs fastest: `init`'s default). Refuses a directory
    /// that is already a vault (exit 7), a non-empty one (exit 1) and a filesystem without `user.*` xattrs, all before `passcode` is
    /// asked for. The keybag is written last, so an interrupted init leaves no half vault.
    /// Throws a `VaultError`, or what `passcode` throws (the command line's reader has errors
    /// of its own, so that `protfsctl` can read a passcode without linking the vault).
    public static func initialize<PasscodeError: Error>(
        backing: String, protectionClass: ProtectionClass, deviceKeyPath: String?, sealer: (any DeviceKeySealer)? = nil,
        sealing: Bool = false, recovery: RecoveryKey? = nil, passcode: () throws(PasscodeError) -> SecureBuffer?, kdf: Argon2idParameters,
        contentAEAD: ContentAEAD = .preferredOnThisCPU
    ) throws -> Initialization {
        do {
            try FileDescriptor.currentWorkingDirectory.makeDirectory(backing, mode: 0o700)
        } catch .exists {
            // An existing directory is fine if it is empty; checked below.
        } catch {
            throw VaultError.system(operation: "create backing directory", path: backing, errno: error)
        }
        let owned = try openBackingRoot(backing)
        let root = owned.borrowed
        try lockExclusively(root, path: backing, timeout: lockTimeout)
        let entries: [String]
        do { entries = try root.entryNames() } catch { throw VaultError.system(operation: "list", path: backing, errno: error) }
        guard !entries.contains(Keybag.fileName) else { throw VaultError.alreadyInitialized(path: backing) }
        guard entries.isEmpty else { throw VaultError.backingNotEmpty(path: backing) }
        try probeExtendedAttributes(root, path: backing)
        do { try root.changeMode(0o700) } catch { throw VaultError.system(operation: "set the mode of", path: backing, errno: error) }

        // The passcode before the device key: an init abandoned at the prompt must not leave
        // a new device key behind that nobody was told about.
        let secret = try passcode()
        let deviceKeyFile = DeviceKeyFile(path: deviceKeyPath ?? DeviceKeyFile.defaultPath())
        let (deviceKey, created) = try deviceKeyFile.loadOrCreate(sealer: sealer, sealing: sealing)
        let deviceKeys = DeviceKeys(deviceKey: deviceKey)
        let sealing = sealing ? sealer.map(PasscodeSecretSealing.init) : nil
        let keybag = try VaultError.keybag { () throws(KeybagError) in
            try Keybag.create(passcode: secret, kdf: kdf, contentAEAD: contentAEAD, deviceKeys: deviceKeys, sealing: sealing?.seal)
        }
        let filesystemKeys = FilesystemKeys(filesystemKey: try VaultError.keybag { () throws(KeybagError) in
            try keybag.unwrapFilesystemKey(deviceKeys: deviceKeys)
        })
        let rootMetadata = DirectoryMetadata.new(protectionClass: protectionClass)
        do throws(VaultError) {
            do throws(Errno) {
                try rootMetadata.create(in: root, vaultID: keybag.vaultID, keys: filesystemKeys)
                try ClassHint.write(protectionClass, to: root, objectID: rootMetadata.directoryID, keys: filesystemKeys)
            } catch {
                throw .system(operation: "write the root metadata of", path: backing, errno: error)
            }
            var state = try VaultState.load(beside: deviceKeyFile, vaultID: keybag.vaultID)
            try state.record(generation: keybag.generation)
            // The recovery seal first: the passcode secret's is sealed to its public key.
            if let recovery {
                try RecoveryFile.write(deviceKey: deviceKey, publicKey: recovery.publicKey, in: root, backingPath: backing)
            }
            try sealing?.write(in: root, generation: keybag.generation, backingPath: backing)
            try VaultError.keybag { () throws(KeybagError) in try keybag.write(in: root, backingPath: backing) }
        } catch {
            try? root.removeFile(DirectoryMetadata.fileName)
            try? root.removeExtendedAttribute(ClassHint.attributeName)
            PasscodeSealFile.removeAll(in: root, except: nil)
            RecoveryFile.removeAll(in: root)
            throw error
        }
        return Initialization(vaultID: keybag.vaultID, rootClass: protectionClass, deviceKeyPath: deviceKeyFile.path,
                              contentAEAD: contentAEAD, deviceKeyCreated: created)
    }

    // MARK: backing directory checks

    private static func openBackingRoot(_ path: String) throws(VaultError) -> OwnedDescriptor {
        do { return try OwnedDescriptor.open(path: path, [.readOnly, .directory]) } catch .noEntry {
            throw .backingMissing(path: path)
        } catch {
            throw .system(operation: "open backing directory", path: path, errno: error)
        }
    }

    /// Takes the exclusive `flock` every protfs process holds on a backing directory (or on
    /// another file it shares), waiting up to `timeout` for another holder to let go.
    static func lockExclusively(_ root: FileDescriptor, path: String, timeout: Duration) throws(VaultError) {
        let pause = Duration.milliseconds(50)
        var waited = Duration.zero
        while true {
            do { return try root.setLock(exclusive: true, wait: false) } catch .wouldBlock {
                guard waited < timeout else { throw .backingBusy(path: path, waitedSeconds: timeout.secondsRoundedUp) }
                sleep(for: pause)
                waited += pause
            } catch {
                throw .system(operation: "lock backing directory", path: path, errno: error)
            }
        }
    }

    /// `init` makes the root 0700; `mount` puts back a looser mode with a warning.
    private static func tightenMode(_ root: FileDescriptor, path: String) throws(VaultError) -> [String] {
        do throws(Errno) {
            let mode = try root.status().st_mode & 0o7777
            guard mode & 0o077 != 0 else { return [] }
            try root.changeMode(mode & 0o700)
            return ["backing directory \(path) had mode \(String(mode, radix: 8)); changed it to \(String(mode & 0o700, radix: 8))"]
        } catch {
            throw .system(operation: "check the mode of", path: path, errno: error)
        }
    }

    /// The class hints and sealed xattrs need `user.*` attributes on the backing filesystem.
    private static func checkExtendedAttributes(_ root: FileDescriptor, path: String) throws(VaultError) {
        do { _ = try root.extendedAttribute(ClassHint.attributeName) } catch .noData {
            return
        } catch .notSupported {
            throw .extendedAttributesUnsupported(path: path)
        } catch {
            throw .system(operation: "read extended attributes of", path: path, errno: error)
        }
    }

    /// `init` cannot read an attribute that is not there yet, so it writes and removes one.
    private static func probeExtendedAttributes(_ root: FileDescriptor, path: String) throws(VaultError) {
        do {
            try root.setExtendedAttribute(ClassHint.attributeName, [])
            try root.removeExtendedAttribute(ClassHint.attributeName)
        } catch .notSupported {
            throw .extendedAttributesUnsupported(path: path)
        } catch {
            throw .system(operation: "set extended attributes on", path: path, errno: error)
        }
    }
}
