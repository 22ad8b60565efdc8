import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// `BACKING/protfs.keybag`, the 534-byte layout of docs/FORMAT.md: the filesystem key and
/// the four class keys, each wrapped under the device (filesystem key, `none`) or under
/// passcode + device (the others), the class-B public key in the clear, and a MAC over the
/// whole under a device-derived key. A vault without a passcode (docs/BACKUP.md) has a
/// version-2 keybag, the same layout with a flag, whose passcode entries are wrapped under
/// the device alone; a vault with a passcode keeps version 1, which older builds read. A vault
/// whose contents are sealed with AES-256-GCM rather than XChaCha20-Poly1305 has a version-3
/// keybag, whose flags carry both the passcode bit and the content AEAD. A value
/// of this type has passed every check of `decode` (or was just assembled), so its fields can
/// be trusted.
public struct Keybag: Sendable, Equatable {
    public static let byteCount = 534
    /// A vault with a passcode.
    static let passcodeVersion: UInt16 = 1
    /// A vault without a passcode: the flags field says so.
    static let noPasscodeVersion: UInt16 = 2
    /// A vault whose content AEAD is not XChaCha20-Poly1305: the flags' high byte names it.
    static let contentAEADVersion: UInt16 = 3
    public static let currentVersion = contentAEADVersion
    /// Bit 0 of the flags (bytes 10..<12, reserved in version 1): no passcode.
    static let noPasscodeFlag: UInt16 = 1
    /// Bit 1, version 1 only: the passcode entries also need the passcode secret a TPM
    /// releases only for the right passcode, counting wrong ones (docs/FORMAT.md).
    static let hardwareCountedFlag: UInt16 = 2
    /// Bit 2, either version: the device key was replaced (`protfs device-key`); the keys of
    /// file headers and device-bound items come from the first one, kept in
    /// `protfs.device-origin.*` under the current one (docs/FORMAT.md).
    static let deviceKeyMovedFlag: UInt16 = 4

    /// Seals a fresh passcode secret under the auth value it is given (derived from the
    /// passcode key) and returns the secret: the vault's TPM, the keybag's caller.
    public typealias PasscodeSecretSealer = (_ auth: LockedKey) throws(KeybagError) -> LockedKey
    public static let fileName = "protfs.keybag"
    static let magic = Array("PROTFSKB".utf8)

    public let version: UInt16
    /// Bytes 10..<12: bit 0 no passcode, bits 8..<16 the content AEAD (version 3 only).
    let flags: UInt16
    /// False for a vault whose class keys open with the device key alone.
    public var passcodeSet: Bool { flags & Self.noPasscodeFlag == 0 }
    /// What file contents are sealed with: XChaCha20-Poly1305 but in a version-3 keybag.
    public var contentAEAD: ContentAEAD { ContentAEAD(rawValue: UInt8(flags >> 8)) ?? .xchacha20Poly1305 }
    /// The passcode entries need the TPM's passcode secret too: wrong passcodes are counted
    /// by the TPM.
    public var passcodeCountedByHardware: Bool { flags & Self.hardwareCountedFlag != 0 }
    /// The device key was replaced since the vault was made: the vault's first device key,
    /// which file headers and device-bound items are keyed with, is kept beside the keybag.
    public var deviceKeyMoved: Bool { flags & Self.deviceKeyMovedFlag != 0 }
    public let vaultID: ObjectID
    /// 1 at creation, + 1 at every passcode change; mirrored in `VaultState`.
    public let generation: UInt64
    public let kdf: Argon2idParameters
    let salt: [UInt8]
    let deviceKeyCheck: [UInt8]
    /// The `completeUnlessOpen` public key, which wraps new files of that class in every state.
    public let classBPublicKey: [UInt8]
    let entries: [Entry]
    let mac: [UInt8]

    /// The five entries, in file order, with their class id and wrap kind (FORMAT.md).
    enum Slot: Int, CaseIterable {
        case filesystem, none, completeUntilFirstUserAuthentication, complete, completeUnlessOpenPrivate

        var classID: UInt8 {
            switch self {
            case .filesystem: 0
            case .none: ProtectionClass.none.rawValue
            case .completeUntilFirstUserAuthentication: ProtectionClass.completeUntilFirstUserAuthentication.rawValue
            case .complete: ProtectionClass.complete.rawValue
            case .completeUnlessOpenPrivate: ProtectionClass.completeUnlessOpen.rawValue
            }
        }

        /// 1: under the device-derived wrap key only; 2: under the passcode key. Without a
        /// passcode every entry is of kind 1.
        func wrapKind(passcodeSet: Bool) -> UInt8 { passcodeSet && needsPasscode ? 2 : 1 }

        var needsPasscode: Bool { self != .filesystem && self != .none }
    }

    struct Entry: Sendable, Equatable {
        let classID: UInt8
        let wrapKind: UInt8
        let sealed: [UInt8]
    }

    static let entryByteCount = 2 + LockedKey.byteCount + XChaCha20Poly1305.overhead
    static let entriesOffset = 132
    static let macOffset = entriesOffset + Slot.allCases.count * entryByteCount
    static let macByteCount = 32

    // MARK: creating

    /// A new vault's keybag: random vault id, filesystem key, class keys, class-B key pair
    /// and salt; generation 1. Without a passcode, the salt is zeros (nothing uses it) and
    /// the Argon2id parameters wait for the passcode a later `passwd` sets.
    /// With `sealing`, the passcode entries also need the passcode secret it seals.
    public static func create(passcode: SecureBuffer?, kdf: Argon2idParameters, contentAEAD: ContentAEAD,
                              deviceKeys: DeviceKeys, sealing: PasscodeSecretSealer? = nil) throws(KeybagError) -> Keybag {
        let classKeys = PasscodeClassKeys(complete: .random(), completeUntilFirstUserAuthentication: .random(),
                                          completeUnlessOpenPrivate: X25519.generatePrivateKey())
        return try assemble(vaultID: .random(), generation: 1, kdf: kdf, contentAEAD: contentAEAD, passcode: passcode,
                            classBPublicKey: X25519.publicKey(for: classKeys.completeUnlessOpenPrivate),
                            deviceEntryKeys: (filesystem: .random(), none: .random()),
                            classKeys: classKeys, deviceKeys: deviceKeys, sealing: sealing)
    }

    /// `passwd`: the same keys re-wrapped under `newPasscode` with a fresh salt (or under the
    /// device alone when it is nil: the passcode removed), generation + 1. The device entries
    /// are sealed again too (the generation is in their associated data). O(1): no file is
    /// touched.
    /// With `sealing`, a new passcode secret sealed under the new passcode joins it.
    public func changingPasscode(to newPasscode: SecureBuffer?, classKeys: PasscodeClassKeys,
                                 deviceKeys: DeviceKeys, sealing: PasscodeSecretSealer? = nil) throws(KeybagError) -> Keybag {
        try Self.assemble(vaultID: vaultID, generation: generation + 1, kdf: kdf, contentAEAD: contentAEAD, passcode: newPasscode,
                          classBPublicKey: classBPublicKey,
                          deviceEntryKeys: (filesystem: try unwrapFilesystemKey(deviceKeys: deviceKeys),
                                            none: try unwrapNoneKey(deviceKeys: deviceKeys)),
                          classKeys: classKeys, deviceKeys: deviceKeys, sealing: sealing, deviceKeyMoved: deviceKeyMoved)
    }

    /// A restored vault's keybag (docs/BACKUP.md): the keys of the backup under this
    /// device and `passcode` (none: a vault without a passcode), at `generation`.
    public static func restoring(_ keys: VaultKeys, generation: UInt64, passcode: SecureBuffer?,
                                 deviceKeys: DeviceKeys) throws(KeybagError) -> Keybag {
        try restoring(keys, generation: generation,
                      stretched: try passcode.map { (secret) throws(KeybagError) in try stretch(secret, kdf: keys.kdf) },
                      deviceKeys: deviceKeys)
    }

    /// The same, with the passcode already run through Argon2id under the keys' parameters.
    public static func restoring(_ keys: VaultKeys, generation: UInt64, stretched: StretchedPasscode?,
                                 deviceKeys: DeviceKeys) throws(KeybagError) -> Keybag {
        precondition(stretched.map { $0.kdf == keys.kdf } ?? true, "a passcode stretched under other parameters")
        return try assemble(vaultID: keys.vaultID, generation: generation, kdf: keys.kdf, contentAEAD: keys.contentAEAD, stretched: stretched,
                        classBPublicKey: keys.classBPublicKey, deviceEntryKeys: (filesystem: keys.filesystem, none: keys.none),
                        classKeys: keys.classKeys, deviceKeys: deviceKeys)
    }

    /// A new passcode run through Argon2id under a fresh salt, ahead of the keybag it goes
    /// into (a restore runs it beside the backup passphrase's, on the core that would idle).
    public struct StretchedPasscode: Sendable {
        public let kdf: Argon2idParameters
        let salt: [UInt8]
        let key: LockedKey
    }

    public static func stretch(_ passcode: SecureBuffer, kdf: Argon2idParameters) throws(KeybagError) -> StretchedPasscode {
        let salt = SecureRandom.bytes(Argon2id.saltByteCount)
        do {
            return StretchedPasscode(kdf: kdf, salt: salt, key: try Argon2id.deriveKey(passcode: passcode, salt: salt, parameters: kdf))
        } catch {
            throw .passcodeHashFailed
        }
    }

    static func assemble(vaultID: ObjectID, generation: UInt64, kdf: Argon2idParameters, contentAEAD: ContentAEAD,
                         passcode: SecureBuffer?,
                         classBPublicKey: [UInt8], deviceEntryKeys: (filesystem: LockedKey, none: LockedKey),
                         classKeys: PasscodeClassKeys, deviceKeys: DeviceKeys,
                         sealing: PasscodeSecretSealer?, deviceKeyMoved: Bool = false) throws(KeybagError) -> Keybag {
        try assemble(vaultID: vaultID, generation: generation, kdf: kdf, contentAEAD: contentAEAD,
                     stretched: try passcode.map { (secret) throws(KeybagError) in try stretch(secret, kdf: kdf) },
                     classBPublicKey: classBPublicKey, deviceEntryKeys: deviceEntryKeys, classKeys: classKeys, deviceKeys: deviceKeys,
                     sealing: sealing, deviceKeyMoved: deviceKeyMoved)
    }

    private static func assemble(vaultID: ObjectID, generation: UInt64, kdf: Argon2idParameters, contentAEAD: ContentAEAD,
                                 stretched: StretchedPasscode?,
                                 classBPublicKey: [UInt8], deviceEntryKeys: (filesystem: LockedKey, none: LockedKey),
                                 classKeys: PasscodeClassKeys, deviceKeys: DeviceKeys,
                                 sealing: PasscodeSecretSealer? = nil, deviceKeyMoved: Bool = false) throws(KeybagError) -> Keybag {
        let salt = stretched?.salt ?? [UInt8](repeating: 0, count: Argon2id.saltByteCount)
        var passcodeKey = deviceKeys.wrap
        var counted = false
        if let stretched {
            passcodeKey = tangle(stretched.key, vaultID: vaultID, deviceKeys: deviceKeys)
            if let sealing {
                passcodeKey = harden(passcodeKey, with: try sealing(hardwareAuth(passcodeKey: passcodeKey)))
                counted = true
            }
        }
        var (version, flags) = form(passcodeSet: stretched != nil, contentAEAD: contentAEAD)
        if counted { flags |= hardwareCountedFlag }
        if deviceKeyMoved { flags |= deviceKeyMovedFlag }
        let entries = Slot.allCases.map { slot -> Entry in
            let (secret, wrappingKey): (LockedKey, LockedKey) = switch slot {
            case .filesystem: (deviceEntryKeys.filesystem, deviceKeys.wrap)
            case .none: (deviceEntryKeys.none, deviceKeys.wrap)
            case .completeUntilFirstUserAuthentication: (classKeys.completeUntilFirstUserAuthentication, passcodeKey)
            case .complete: (classKeys.complete, passcodeKey)
            case .completeUnlessOpenPrivate: (classKeys.completeUnlessOpenPrivate, passcodeKey)
            }
            let ad = associatedData(version: version, passcodeSet: stretched != nil, vaultID: vaultID, slot: slot,
                                    generation: generation)
            return Entry(classID: slot.classID, wrapKind: slot.wrapKind(passcodeSet: stretched != nil),
                         sealed: XChaCha20Poly1305.wrap(secret, authenticating: ad, with: wrappingKey))
        }
        let unsigned = Keybag(version: version, flags: flags, vaultID: vaultID, generation: generation, kdf: kdf, salt: salt,
                              deviceKeyCheck: deviceKeyCheck(vaultID: vaultID, deviceKeys: deviceKeys),
                              classBPublicKey: classBPublicKey, entries: entries, mac: [])
        return unsigned.signed(deviceKeys: deviceKeys)
    }

    /// This keybag with its MAC computed over its other fields.
    func signed(deviceKeys: DeviceKeys) -> Keybag {
        Keybag(version: version, flags: flags, vaultID: vaultID, generation: generation, kdf: kdf, salt: salt,
               deviceKeyCheck: deviceKeyCheck, classBPublicKey: classBPublicKey, entries: entries,
               mac: BLAKE2b.mac(key: deviceKeys.keybagMAC, outputByteCount: Self.macByteCount, authenticatedBytes()))
    }

    /// The version and flags of a keybag: versions 1 and 2 (which older builds read) for
    /// XChaCha20-Poly1305 contents, version 3 for any other AEAD.
    static func form(passcodeSet: Bool, contentAEAD: ContentAEAD) -> (version: UInt16, flags: UInt16) {
        let passcodeBit = passcodeSet ? 0 : noPasscodeFlag
        guard contentAEAD != .xchacha20Poly1305 else { return (passcodeSet ? passcodeVersion : noPasscodeVersion, passcodeBit) }
        return (contentAEADVersion, passcodeBit | UInt16(contentAEAD.rawValue) << 8)
    }

    // MARK: encoding

    /// The 534 bytes of the file.
    public func encoded() -> [UInt8] { authenticatedBytes() + mac }

    /// Bytes 0..<502: everything the MAC covers.
    func authenticatedBytes() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(Self.byteCount)
        out.appendLittleEndian(version)
        out.appendLittleEndian(flags)
        out += vaultID.bytes
        out.appendLittleEndian(generation)
        out.appendLittleEndian(kdf.opsLimit)
        out.appendLittleEndian(kdf.memLimit)
        out += salt
        out += deviceKeyCheck
        out += classBPublicKey
        for entry in entries { out += [entry.classID, entry.wrapKind] + entry.sealed }
        return out
    }

    /// Parses and checks a keybag, in FORMAT.md's order: size and magic, version, device
    /// key check, MAC, then the entry layout. The generation and the Argon2id parameters
    /// are checked by `admit(into:)`, which needs the vault state.
    public static func decode(_ bytes: [UInt8], deviceKeys: DeviceKeys) throws(KeybagError) -> Keybag {
        guard bytes.count == byteCount else { throw .damaged(reason: "it has \(bytes.count) bytes instead of \(byteCount)") }
        guard Array(bytes[0..<8]) == magic else { throw .damaged(reason: "it does not start with the protfs keybag magic") }
        let version: UInt16 = bytes.littleEndian(at: 8)
        guard version <= currentVersion else { throw .newerVersion(version) }
        guard version >= 1 else { throw .damaged(reason: "format version 0 does not exist") }
        let vaultID = ObjectID(bytes: Array(bytes[12..<28]))!
        let check = Array(bytes[68..<100])
        guard ConstantTime.equal(check, deviceKeyCheck(vaultID: vaultID, deviceKeys: deviceKeys)) else {
            throw .deviceKeyMismatch
        }
        let expectedMAC = BLAKE2b.mac(key: deviceKeys.keybagMAC, outputByteCount: macByteCount, Array(bytes[0..<macOffset]))
        guard ConstantTime.equal(Array(bytes[macOffset...]), expectedMAC) else {
            throw .damaged(reason: "its MAC does not verify (tampered or corrupted)")
        }
        let flags: UInt16 = bytes.littleEndian(at: 10)
        let passcodeSet = version == contentAEADVersion ? flags & noPasscodeFlag == 0 : version == passcodeVersion
        var entries: [Entry] = []
        for slot in Slot.allCases {
            let start = entriesOffset + slot.rawValue * entryByteCount
            let entry = Entry(classID: bytes[start], wrapKind: bytes[start + 1],
                              sealed: Array(bytes[(start + 2)..<(start + entryByteCount)]))
            guard entry.classID == slot.classID, entry.wrapKind == slot.wrapKind(passcodeSet: passcodeSet) else {
                throw .damaged(reason: "entry \(slot.rawValue + 1) is not the one the format puts there")
            }
            entries.append(entry)
        }
        // Version 1 has reserved bytes there but for the TPM bit; version 2 exactly the
        // no-passcode flag; version 3 the passcode bit and an AEAD other than
        // XChaCha20-Poly1305 (which keeps 1 and 2). The TPM bit (only with a passcode) and the
        // moved-key bit may stand beside them in any version.
        let extra = deviceKeyMovedFlag | (passcodeSet ? hardwareCountedFlag : 0)
        guard let aead = ContentAEAD(rawValue: UInt8(flags >> 8)),
              form(passcodeSet: passcodeSet, contentAEAD: aead) == (version, flags & ~extra) else {
            throw .damaged(reason: version == passcodeVersion ? "reserved bytes are not zero" : "its flags are not the ones of its version")
        }
        return Keybag(version: version, flags: flags, vaultID: vaultID, generation: bytes.littleEndian(at: 28),
                      kdf: Argon2idParameters(opsLimit: bytes.littleEndian(at: 36), memLimit: bytes.littleEndian(at: 44)),
                      salt: Array(bytes[52..<68]), deviceKeyCheck: check, classBPublicKey: Array(bytes[100..<132]),
                      entries: entries, mac: expectedMAC)
    }

    // MARK: unwrapping

    /// The filesystem key: needs the device only, so it is available in every state.
    public func unwrapFilesystemKey(deviceKeys: DeviceKeys) throws(KeybagError) -> LockedKey {
        try unwrapDamageOnFailure(.filesystem, with: deviceKeys.wrap)
    }

    /// The `none` class key: needs the device only.
    public func unwrapNoneKey(deviceKeys: DeviceKeys) throws(KeybagError) -> LockedKey {
        try unwrapDamageOnFailure(.none, with: deviceKeys.wrap)
    }

    /// Runs Argon2id and unwraps the passcode entries; nil for a wrong passcode. Checks that
    /// the `completeUnlessOpen` private key gives the stored public key.
    /// Without a passcode in this keybag, that is damage to the caller, who checks
    /// `passcodeSet` first.
    public func unlock(passcode: SecureBuffer, deviceKeys: DeviceKeys) throws(KeybagError) -> PasscodeClassKeys? {
        try unlock(passcodeKey: passcodeKey(for: passcode, deviceKeys: deviceKeys), passcodeSecret: nil)
    }

    /// Runs Argon2id and tangles its output with the device: the key the passcode entries
    /// are wrapped under, or (`passcodeCountedByHardware`) the key the TPM's auth value and,
    /// with its secret, the wrapping key derive from.
    public func passcodeKey(for passcode: SecureBuffer, deviceKeys: DeviceKeys) throws(KeybagError) -> LockedKey {
        guard passcodeSet else { throw .noPasscodeSet }
        return try Self.derivePasscodeKey(passcode: passcode, salt: salt, kdf: kdf, vaultID: vaultID, deviceKeys: deviceKeys)
    }

    /// The passcode entries under `passcodeKey` and, when the keybag says so, the TPM's
    /// passcode secret; nil for a wrong passcode.
    public func unlock(passcodeKey key: LockedKey, passcodeSecret: LockedKey?) throws(KeybagError) -> PasscodeClassKeys? {
        guard passcodeSet else { throw .noPasscodeSet }
        guard passcodeCountedByHardware == (passcodeSecret != nil) else {
            throw .damaged(reason: passcodeCountedByHardware ? "it needs the TPM's passcode secret" : "it has no TPM passcode secret")
        }
        let passcodeKey = passcodeSecret.map { Self.harden(key, with: $0) } ?? key
        // The first passcode entry tells a wrong passcode (the MAC already vouched for the
        // bytes); once it opens, a failure of the others is damage.
        guard let cuFUA = try? unwrap(.completeUntilFirstUserAuthentication, with: passcodeKey) else { return nil }
        return try classKeys(completeUntilFirstUserAuthentication: cuFUA, openingWith: passcodeKey)
    }

    /// The keys a passcode would unlock, from a keybag without one: the device opens them.
    public func unlockWithoutPasscode(deviceKeys: DeviceKeys) throws(KeybagError) -> PasscodeClassKeys {
        guard !passcodeSet else { throw .passcodeRequired }
        return try classKeys(completeUntilFirstUserAuthentication: unwrapDamageOnFailure(.completeUntilFirstUserAuthentication,
                                                                                         with: deviceKeys.wrap),
                             openingWith: deviceKeys.wrap)
    }

    /// The other two entries under `key`, and the check that the private `completeUnlessOpen`
    /// key gives the stored public key.
    private func classKeys(completeUntilFirstUserAuthentication cuFUA: LockedKey,
                           openingWith key: LockedKey) throws(KeybagError) -> PasscodeClassKeys {
        let keys = PasscodeClassKeys(complete: try unwrapDamageOnFailure(.complete, with: key),
                                     completeUntilFirstUserAuthentication: cuFUA,
                                     completeUnlessOpenPrivate: try unwrapDamageOnFailure(.completeUnlessOpenPrivate, with: key))
        guard ConstantTime.equal(X25519.publicKey(for: keys.completeUnlessOpenPrivate), classBPublicKey) else {
            throw .damaged(reason: "the completeUnlessOpen private key does not match its public key")
        }
        return keys
    }

    private func unwrap(_ slot: Slot, with key: LockedKey) throws -> LockedKey {
        let ad = Self.associatedData(version: version, passcodeSet: passcodeSet, vaultID: vaultID, slot: slot, generation: generation)
        return try XChaCha20Poly1305.unwrap(entries[slot.rawValue].sealed, authenticating: ad, with: key)
    }

    private func unwrapDamageOnFailure(_ slot: Slot, with key: LockedKey) throws(KeybagError) -> LockedKey {
        do { return try unwrap(slot, with: key) } catch {
            throw .damaged(reason: "entry \(slot.rawValue + 1) does not open")
        }
    }

    // MARK: constructions

    /// `magic || version || vault id || class id || wrap kind || generation`.
    static func associatedData(version: UInt16, passcodeSet: Bool, vaultID: ObjectID, slot: Slot, generation: UInt64) -> [UInt8] {
        var ad = magic
        ad.appendLittleEndian(version)
        ad += vaultID.bytes
        ad += [slot.classID, slot.wrapKind(passcodeSet: passcodeSet)]
        ad.appendLittleEndian(generation)
        return ad
    }

    /// `MAC(key = pfdevchk subkey, "protfs device key check v1" || vault id)`.
    static func deviceKeyCheck(vaultID: ObjectID, deviceKeys: DeviceKeys) -> [UInt8] {
        BLAKE2b.mac(key: deviceKeys.keyCheck, outputByteCount: 32, Array("protfs device key check v1".utf8), vaultID.bytes)
    }

    /// `BLAKE2b-256(key = tangle, "protfs passcode v1" || vault id || Argon2id(passcode))`;
    /// the Argon2id output is wiped as soon as it is tangled.
    static func derivePasscodeKey(passcode: SecureBuffer, salt: [UInt8], kdf: Argon2idParameters, vaultID: ObjectID,
                                  deviceKeys: DeviceKeys) throws(KeybagError) -> LockedKey {
        let stretched: LockedKey
        do { stretched = try Argon2id.deriveKey(passcode: passcode, salt: salt, parameters: kdf) } catch {
            throw .passcodeHashFailed
        }
        return tangle(stretched, vaultID: vaultID, deviceKeys: deviceKeys)
    }

    /// The passcode key from the passcode's Argon2id output, bound to this device and vault.
    private static func tangle(_ stretched: LockedKey, vaultID: ObjectID, deviceKeys: DeviceKeys) -> LockedKey {
        var tangle = BLAKE2b(key: deviceKeys.passcodeTangle, outputByteCount: LockedKey.byteCount)
        tangle.update(Array("protfs passcode v1".utf8))
        tangle.update(vaultID.bytes)
        tangle.update(stretched)
        return tangle.finalizeKey()
    }

    // MARK: files

    /// The raw bytes of `protfs.keybag` in a backing directory (at most one byte more than
    /// a keybag, so a longer file is seen as damaged without reading it all).
    public static func readBytes(in backingRoot: FileDescriptor, backingPath: String) throws(KeybagError) -> [UInt8] {
        // A keybag written by a restore that has not ended yet is not a vault's.
        if RestoreMarker.mark(in: backingRoot) != nil { throw .restoreInterrupted(path: backingPath) }
        let file: OwnedDescriptor
        do { file = try OwnedDescriptor.openRegularFile(fileName, in: backingRoot) } catch .noEntry {
            throw .missing(path: backingPath)
        } catch .io {
            throw .damaged(reason: "it is not a regular file")
        } catch {
            throw .system(operation: "open the keybag in", path: backingPath, errno: error)
        }
        let fd = file.borrowed
        var bytes = [UInt8](repeating: 0, count: byteCount + 1)
        do throws(Errno) {
            let n = try bytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
            bytes.removeLast(bytes.count - n)
        } catch {
            throw .system(operation: "read the keybag in", path: backingPath, errno: error)
        }
        return bytes
    }

    /// Writes this keybag over `protfs.keybag` atomically (a `protfs.tmp.*` file, fsync,
    /// rename, fsync the directory).
    public func write(in backingRoot: FileDescriptor, backingPath: String) throws(KeybagError) {
        do {
            try backingRoot.writeFileAtomically(Self.fileName, contents: encoded(), syncDirectory: true)
        } catch {
            throw .system(operation: "write the keybag in", path: backingPath, errno: error)
        }
    }
}
