import ProtfsCrypto
import ProtfsDomain

/// What the file header and its key slots need of the class keys: the vault's id, the
/// device subkeys, the `completeUnlessOpen` public key and the class keys now present. The
/// vault's `ClassKeyring` is one; the format does not know how keys come and go.
public protocol ClassKeySource: Sendable {
    var vaultID: ObjectID { get }
    var deviceKeys: DeviceKeys { get }
    /// The `completeUnlessOpen` public key: always available.
    var classBPublicKey: [UInt8] { get }
    /// The symmetric key of a class (for `completeUnlessOpen`: its private key), if present.
    func key(for protectionClass: ProtectionClass) -> LockedKey?
}
