import ProtfsCrypto

/// The keys a passcode unlocks.
public struct PasscodeClassKeys: Sendable {
    public let complete: LockedKey
    public let completeUntilFirstUserAuthentication: LockedKey
    public let completeUnlessOpenPrivate: LockedKey

    package init(complete: LockedKey, completeUntilFirstUserAuthentication: LockedKey, completeUnlessOpenPrivate: LockedKey) {
        self.complete = complete
        self.completeUntilFirstUserAuthentication = completeUntilFirstUserAuthentication
        self.completeUnlessOpenPrivate = completeUnlessOpenPrivate
    }
}

/// Every key of a vault and what its keybag holds in the clear: what a backup carries.
public struct VaultKeys: Sendable {
    public let vaultID: ObjectID
    public let kdf: Argon2idParameters
    public let classBPublicKey: [UInt8]
    public let filesystem: LockedKey
    public let none: LockedKey
    public let classKeys: PasscodeClassKeys
    /// What the vault's files are sealed with: a restore keeps it, as it keeps their chunks.
    public let contentAEAD: ContentAEAD

    package init(vaultID: ObjectID, kdf: Argon2idParameters, classBPublicKey: [UInt8], filesystem: LockedKey, none: LockedKey,
                 classKeys: PasscodeClassKeys, contentAEAD: ContentAEAD) {
        self.vaultID = vaultID
        self.kdf = kdf
        self.classBPublicKey = classBPublicKey
        self.filesystem = filesystem
        self.none = none
        self.classKeys = classKeys
        self.contentAEAD = contentAEAD
    }
}
