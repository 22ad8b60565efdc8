import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// `protfs restore` and `protfs backup --verify` (docs/BACKUP.md).
public enum VaultRestore {
    public struct Restored: Sendable {
        public let vaultID: ObjectID
        public let entries: UInt64
        /// The bytes of file contents restored.
        public let bytes: UInt64
        public let deviceKeyPath: String
        public let deviceKeyCreated: Bool
        /// Objects made without the set-user-ID or set-group-ID bits the archive gave them.
        public let setIDBitsCleared: UInt64
        /// Entries not made (each reported).
        public let entriesLeftOut: UInt64
    }

    /// Opens the archive and checks the passphrase (exit 3 when wrong) through the delays of
    /// wrong passcodes, counted per archive beside `deviceKeyFile`; then the keybag. The
    /// reader reads through a descriptor of its own.
    private static func open(_ archive: String, passphrase: SecureBuffer, deviceKeyFile: DeviceKeyFile,
                             alongside: (Argon2idParameters) -> Void = { _ in })
        throws(BackupError) -> (BackupStreamReader, VaultKeys, LockedKey) {
        let file: OwnedDescriptor
        do { file = try OwnedDescriptor.open(path: archive, [.readOnly]) } catch {
            throw .system(operation: "open", path: archive, errno: error)
        }
        let (reader, keys) = try BackupStreamReader.open(file: file.borrowed, passphrase: passphrase,
                                                         alongside: alongside) { (archiveID) throws(BackupError) in
            do throws(VaultError) {
                var state = try VaultState.load(beside: deviceKeyFile, archiveID: archiveID)
                try state.beginPasscodeAttempt()
                return { () throws(BackupError) in
                    do throws(VaultError) { try state.recordSuccess() } catch { throw .attemptRefused(by: error) }
                }
            } catch {
                throw .attemptRefused(by: error)
            }
        }
        let (vaultKeys, transport) = try BackupKeybag.decode(try reader.read(BackupKeybag.byteCount),
                                                             archiveID: reader.archiveID, contentAEAD: reader.contentAEAD,
                                                             with: keys.keybag)
        return (reader, vaultKeys, transport)
    }

    /// Reads the whole archive and checks every chunk, record and file header; writes nothing.
    /// Each entry a restore would leave out or change goes to `report`, as it is read.
    public static func verify(archive: String, passphrase: SecureBuffer, deviceKeyPath: String?,
                              report: @escaping (ArchiveFinding) -> Void) throws(BackupError) -> UInt64 {
        let deviceKeyFile = DeviceKeyFile(path: deviceKeyPath ?? DeviceKeyFile.defaultPath())
        let (reader, keys, transport) = try open(archive, passphrase: passphrase, deviceKeyFile: deviceKeyFile)
        let replay = ArchiveReplay(reader: reader, transport: transportKeyring(keys, transport), screen: screen(keys, report),
                                   maker: nil)
        try replay.run()
        return replay.entryCount
    }

    /// A new vault in `backing` (missing or empty) from the archive, under the device key at
    /// `deviceKeyPath` (made if missing) and the passcode `passcode` gives (nil: none), asked
    /// for once the passphrase is known to be right unless `passcodeAtHand` (it reads no
    /// prompt: it is then asked for first, and stretched while the passphrase is). A wrong
    /// passphrase is told before anything is made; any later failure removes what was made.
    /// Each entry left out or changed (`ArchiveScreen`) goes to `report` as it is read.
    public static func restore<PasscodeError: Error>(
        archive: String, backing: String, deviceKeyPath: String?, sealer: (any DeviceKeySealer)? = nil,
        passphrase: SecureBuffer, passcodeAtHand: Bool = false,
        passcode: () throws(PasscodeError) -> SecureBuffer?, report: @escaping (ArchiveFinding) -> Void = { _ in },
        progress: @escaping (_ objects: UInt64, _ bytes: UInt64) -> Void = { _, _ in }
    ) throws -> Restored {
        let existed = try checkDestination(backing)
        let deviceKeyFile = DeviceKeyFile(path: deviceKeyPath ?? DeviceKeyFile.defaultPath())
        let early: SecureBuffer?? = passcodeAtHand ? .some(try passcode()) : .none
        var stretch: PasscodeStretch?
        defer { stretch?.join() }
        let (reader, keys, transport) = try open(archive, passphrase: passphrase, deviceKeyFile: deviceKeyFile) { kdf in
            if case let .some(secret?) = early { stretch = PasscodeStretch(secret, kdf: kdf) }
        }
        let secret = try early ?? passcode()
        if !existed {
            do { try FileDescriptor.currentWorkingDirectory.makeDirectory(backing, mode: 0o700) } catch {
                throw BackupError.system(operation: "create", path: backing, errno: error)
            }
        }
        var deviceKeyCreated = false
        let ownedRoot: OwnedDescriptor
        do { ownedRoot = try OwnedDescriptor.open(path: backing, [.readOnly, .directory]) } catch {
            if !existed { rmdir(backing) }
            throw BackupError.system(operation: "open", path: backing, errno: error)
        }
        let root = ownedRoot.borrowed
        // Once the directory is known to be empty, what is in it is this restore's to undo.
        var making = false
        do {
            try Vault.lockExclusively(root, path: backing, timeout: Vault.lockTimeout)
            try clearInterruptedRestore(of: keys.vaultID, in: root, path: backing)
            try checkEmpty(root, path: backing)
            making = true
            do throws(Errno) { try RestoreMarker.write(vaultID: keys.vaultID, in: root) } catch {
                throw BackupError.system(operation: "mark the restore in", path: backing, errno: error)
            }
            let (deviceKey, created) = try deviceKeyFile.loadOrCreate(sealer: sealer, sealing: false)
            deviceKeyCreated = created
            let deviceKeys = DeviceKeys(deviceKey: deviceKey)
            // The generation the state beside this device key has for the vault id, if any: a
            // restore beside the original (same machine) must not look like a rollback.
            var state = try VaultState.load(beside: deviceKeyFile, vaultID: keys.vaultID)
            // The new keybag is made beside the replay: it needs only the keys and the passcode.
            // Its Argon2id (a tenth of a source tree's restore) is `stretch`'s, done already,
            // unless the passcode came from a prompt or the archive's parameters are not the
            // vault's; then it runs here.
            let keybagMade = BoundedHandoff<Result<Keybag, VaultError>>(capacity: 1)
            let derivation = try JoinableThread { [generation = max(state.generation, 1), stretch] in
                keybagMade.put(Result { () throws(VaultError) in
                    try VaultError.keybag { () throws(KeybagError) in
                        if let stretch, stretch.kdf == keys.kdf, let stretched = stretch.wait() {
                            return try Keybag.restoring(keys, generation: generation, stretched: stretched, deviceKeys: deviceKeys)
                        }
                        return try Keybag.restoring(keys, generation: generation, passcode: secret, deviceKeys: deviceKeys)
                    }
                })
            }
            // Joined on every path: no derivation goes on after the restore has returned.
            defer { derivation.join() }
            let target = RestoreTarget(root: root, backingPath: backing,
                                       keyring: ClassKeyring(vaultID: keys.vaultID, deviceKeys: deviceKeys,
                                                             classBPublicKey: keys.classBPublicKey, contentAEAD: keys.contentAEAD))
            let maker = try RestoreMaker(into: target)
            defer { maker.stop() }
            let replay = ArchiveReplay(reader: reader, transport: transportKeyring(keys, transport),
                                       screen: screen(keys, report), maker: maker, progress: progress)
            try replay.run()
            try maker.finish()
            guard let restored = try keybagMade.take()?.get() else { preconditionFailure("no keybag from its derivation") }
            try target.finish { () throws in
                // The keybag last, as at init (a vault is only a vault once everything else is
                // there), but before the root's times, which its rename would change.
                if restored.generation > state.generation { try state.record(generation: restored.generation) }
                try restored.write(in: root, backingPath: backing)
                // Then the restore is over: the vault is one from here on.
                do throws(Errno) { try RestoreMarker.remove(in: root) } catch {
                    throw BackupError.system(operation: "unmark the restore in", path: backing, errno: error)
                }
            }
            return Restored(vaultID: keys.vaultID, entries: replay.entryCount, bytes: replay.byteCount,
                            deviceKeyPath: deviceKeyFile.path, deviceKeyCreated: deviceKeyCreated,
                            setIDBitsCleared: replay.screen.setIDBitsCleared, entriesLeftOut: replay.screen.entriesLeftOut)
        } catch {
            if making { clear(root) }
            if !existed { rmdir(backing) }
            if deviceKeyCreated { unlink(deviceKeyFile.path) }
            throw error
        }
    }

    /// Item records are checked under the archive's filesystem key, which the new vault keeps.
    private static func screen(_ keys: VaultKeys, _ report: @escaping (ArchiveFinding) -> Void) -> ArchiveScreen {
        ArchiveScreen(vaultID: keys.vaultID, keys: FilesystemKeys(filesystemKey: keys.filesystem), report: report)
    }

    private static func transportKeyring(_ keys: VaultKeys, _ transport: LockedKey) -> ClassKeyring {
        ClassKeyring(vaultID: keys.vaultID, deviceKeys: DeviceKeys(deviceKey: transport), classBPublicKey: keys.classBPublicKey,
                     contentAEAD: keys.contentAEAD)
    }

    /// True when `backing` exists (it must then be an empty directory, or hold an interrupted
    /// restore, whose archive is checked once it is open), false when missing.
    private static func checkDestination(_ backing: String) throws(BackupError) -> Bool {
        let root: OwnedDescriptor
        do { root = try OwnedDescriptor.open(path: backing, [.readOnly, .directory]) } catch .noEntry {
            return false
        } catch {
            throw .system(operation: "open", path: backing, errno: error)
        }
        if RestoreMarker.mark(in: root.borrowed) == nil { try checkEmpty(root.borrowed, path: backing) }
        return true
    }

    /// What a restore of the same archive (its vault id) made before it was interrupted goes;
    /// a mark of another archive's restore is left, and the directory is refused as not empty.
    private static func clearInterruptedRestore(of vaultID: ObjectID, in root: FileDescriptor, path: String) throws(BackupError) {
        guard let marked = RestoreMarker.mark(in: root) else { return }
        guard marked == vaultID else { throw .interruptedRestoreOfAnotherArchive(path: path) }
        clear(root)
    }

    /// What a restore made in `root`: its entries and the root's extended attributes.
    private static func clear(_ root: FileDescriptor) {
        removeContents(of: root)
        for name in (try? root.extendedAttributeNames()) ?? [] { try? root.removeExtendedAttribute(name) }
    }

    private static func checkEmpty(_ root: FileDescriptor, path: String) throws(BackupError) {
        let names: [String]
        do { names = try root.entryNames() } catch { throw .system(operation: "list", path: path, errno: error) }
        guard names.allSatisfy({ $0 == "." || $0 == ".." }) else { throw .destinationNotEmpty(path: path) }
    }

    /// Removes everything under `directory` (what a failed restore made), never following a symlink.
    private static func removeContents(of directory: FileDescriptor) {
        guard let names = try? directory.entryNames() else { return }
        for name in names where name != "." && name != ".." {
            if let st = try? directory.status(of: name), st.st_mode & S_IFMT == S_IFDIR,
               let child = try? OwnedDescriptor.open(name, in: directory, [.readOnly, .directory]) {
                removeContents(of: child.borrowed)
                try? directory.removeDirectory(name)
            } else {
                try? directory.removeFile(name)
            }
        }
        try? directory.syncDirectory()
    }
}

private extension BackupError {
    /// The wrong-passcode record's refusal, told of the backup passphrase it counts.
    static func attemptRefused(by error: VaultError) -> BackupError {
        .attemptRefused(exitCode: error.exitCode, reason: "\(error)".replacing("passcode", with: "backup passphrase"))
    }
}
