import ProtfsCore
import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport

/// A test vault's keys, opened in the test process as the daemon opens them (device key,
/// keybag, passcode) but without taking the backing directory's lock, so it works beside a
/// live mount. For what only the keys can make (a planted entry named `..`) and for the
/// bytes that must not stay in the daemon's memory.
struct VaultKeys {
    let filesystemKeys: FilesystemKeys
    let classKeys: PasscodeClassKeys
    let keyring: ClassKeyring
    private let backing: String

    init(of vault: TestVault) throws {
        backing = vault.backing
        let deviceKeys = DeviceKeys(deviceKey: try DeviceKeyFile(path: vault.deviceKey).load())
        let keybag = try Self.withBackingDirectory(".", of: vault.backing) { root in
            try Keybag.decode(Keybag.readBytes(in: root, backingPath: vault.backing), deviceKeys: deviceKeys)
        }
        filesystemKeys = FilesystemKeys(filesystemKey: try keybag.unwrapFilesystemKey(deviceKeys: deviceKeys))
        let passcode = Array(TestVault.passcode.utf8).withUnsafeBytes { SecureBuffer(copying: $0) }
        guard let unlocked = try keybag.unlock(passcode: passcode, deviceKeys: deviceKeys) else {
            throw TestFailure("the test passcode does not open the keybag")
        }
        classKeys = unlocked
        keyring = ClassKeyring(vaultID: keybag.vaultID, deviceKeys: deviceKeys, classBPublicKey: keybag.classBPublicKey,
                               contentAEAD: keybag.contentAEAD)
        keyring.install(unlocked.complete, for: .complete)
        keyring.install(unlocked.completeUntilFirstUserAuthentication, for: .completeUntilFirstUserAuthentication)
        keyring.install(unlocked.completeUnlessOpenPrivate, for: .completeUnlessOpen)
        keyring.install(try keybag.unwrapNoneKey(deviceKeys: deviceKeys), for: .none)
    }

    /// The backing name that `name` has in the backing directory `directory` (relative to the
    /// backing root), whether or not the mount would accept such a name.
    func storedName(_ name: [UInt8], inBacking directory: String = ".") throws -> String {
        let metadata = try Self.withBackingDirectory(directory, of: backing) { fd in
            try DirectoryMetadata.read(in: fd, vaultID: keyring.vaultID, keys: filesystemKeys)
        }
        return SIVNameCipher.entryNames(filesystemKeys).encrypt(name, tweak: metadata.directoryID)
    }

    /// Rewrites the backing symlink `relative` as builds before format 2 wrote it (its target
    /// sealed to no location); an out-of-line target's blob is replaced along with it.
    func rewriteInFormatOne(symlink relative: String, target: [UInt8]) throws {
        try Self.withBackingDirectory(".", of: backing) { root in
            SymlinkTarget.removeBlob(backingTarget: try root.readSymlink(relative), root: root)
            try root.removeFile(relative)
            try root.makeSymlink(relative, target: try FormatOneSymlinkTarget.store(target: target, keys: filesystemKeys, root: root))
        }
    }

    /// Sets the attribute `name` (`user.NAME`) of the backing file `relative` in a backing
    /// xattr of its own, as builds before the packed form wrote every attribute.
    func setUnpackedAttribute(_ name: String, _ value: [UInt8], ofBacking relative: String) throws {
        try Self.withBackingDirectory(".", of: backing) { root in
            let fd = try OwnedDescriptor.openRegularFile(relative, in: root).release()
            defer { fd.close() }
            let objectID = try FileHeader.read(from: fd, keyring: keyring).fileID
            let name = Array(name.utf8)
            try fd.setExtendedAttribute(try XattrCodec.backingName(for: name, objectID: objectID, keys: filesystemKeys),
                                        try XattrCodec.sealValue(value, name: name, objectID: objectID, keys: filesystemKeys))
        }
    }

    /// The per-file key of the backing file `relative`, from its header.
    func fileKey(ofBacking relative: String) throws -> [UInt8] {
        try Self.withBackingDirectory(".", of: backing) { root in
            let fd = try OwnedDescriptor.openRegularFile(relative, in: root).release()
            defer { fd.close() }
            let header = try FileHeader.read(from: fd, keyring: keyring)
            return try header.unwrapFileKey(keyring: keyring).withUnsafeBytes { Array($0) }
        }
    }

    /// The class keys the lock must wipe: `complete` and the `completeUnlessOpen` private key.
    var keysWipedByTheLock: [(name: String, bytes: [UInt8])] {
        [("complete", classKeys.complete.withUnsafeBytes { Array($0) }),
         ("completeUnlessOpen private", classKeys.completeUnlessOpenPrivate.withUnsafeBytes { Array($0) })]
    }

    private static func withBackingDirectory<R>(_ relative: String, of backing: String,
                                                _ body: (FileDescriptor) throws -> R) throws -> R {
        let fd = try FileDescriptor.open(path: backing + "/" + relative, [.readOnly, .directory])
        defer { fd.close() }
        return try body(fd)
    }
}
