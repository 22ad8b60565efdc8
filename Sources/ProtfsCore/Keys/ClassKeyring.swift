import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import Synchronization

/// The class keys in memory right now. The lock controller installs them at unlock and
/// drops them at lock; dropping the last reference wipes a key's slot, and a request that
/// is using a key holds a reference, so a key is never wiped under it.
public final class ClassKeyring: ClassKeySource {
    public let vaultID: ObjectID
    public let deviceKeys: DeviceKeys
    /// The `completeUnlessOpen` public key: always available, so files of that class can be
    /// created while locked.
    public let classBPublicKey: [UInt8]
    /// What the vault's file contents are sealed with (its keybag says).
    public let contentAEAD: ContentAEAD
    /// Symmetric keys of `complete`, `completeUntilFirstUserAuthentication` and `none`, and the
    /// private key of `completeUnlessOpen`, by class.
    private let keys = Mutex<[ProtectionClass: LockedKey]>([:])
    /// The per-file keys unwrapped under these class keys that are still in memory.
    public let fileKeys = FileKeyCensus()

    public init(vaultID: ObjectID, deviceKeys: DeviceKeys, classBPublicKey: [UInt8], contentAEAD: ContentAEAD) {
        self.vaultID = vaultID
        self.deviceKeys = deviceKeys
        self.classBPublicKey = classBPublicKey
        self.contentAEAD = contentAEAD
    }

    /// The symmetric key of a class (for `completeUnlessOpen`: its private key), if present.
    public func key(for protectionClass: ProtectionClass) -> LockedKey? {
        keys.withLock { $0[protectionClass] }
    }

    public func install(_ key: LockedKey, for protectionClass: ProtectionClass) {
        keys.withLock { $0[protectionClass] = key }
    }

    /// Drops the keys of `classes`; their slots are wiped as soon as no request holds them.
    public func remove(_ classes: [ProtectionClass]) {
        keys.withLock { k in for c in classes { k[c] = nil } }
    }

    public var installedClasses: Set<ProtectionClass> { keys.withLock { Set($0.keys) } }
}
