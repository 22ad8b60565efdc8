import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// How a per-file key is wrapped in a header slot (docs/FORMAT.md, wrap kinds 3 and 4).
public enum FileKeyWrapKind: UInt8, Sendable {
    /// `completeUnlessOpen`: an ephemeral X25519 agreement with the class public key, so a
    /// file can be created while the private key is wiped.
    case ephemeralX25519 = 3
    /// Every other class: sealed under the symmetric class key.
    case classKey = 4

    /// The only kind a class may use.
    init(for protectionClass: ProtectionClass) {
        self = protectionClass == .completeUnlessOpen ? .ephemeralX25519 : .classKey
    }
}

/// A per-file key as a header slot stores it.
struct WrappedFileKey: Sendable {
    static let sealedByteCount = LockedKey.byteCount + XChaCha20Poly1305.overhead
    static let noEphemeralKey = [UInt8](repeating: 0, count: X25519.publicKeyByteCount)
    private static let classBWrapContext = Array("protfs class B wrap v1".utf8)

    let kind: FileKeyWrapKind
    /// The ephemeral public key of kind 3; zeros for kind 4.
    let ephemeralPublicKey: [UInt8]
    let sealedKey: [UInt8]

    init(kind: FileKeyWrapKind, ephemeralPublicKey: [UInt8], sealedKey: [UInt8]) {
        self.kind = kind
        self.ephemeralPublicKey = ephemeralPublicKey
        self.sealedKey = sealedKey
    }

    /// Wraps `fileKey` for `protectionClass`. Needs only the class public key for
    /// `completeUnlessOpen`, the class key otherwise; `EACCES` when it is not in `keyring`.
    init(wrapping fileKey: LockedKey, for protectionClass: ProtectionClass, fileID: ObjectID, version: UInt16,
         keyring: any ClassKeySource) throws(Errno) {
        let ad = Self.associatedData(protectionClass: protectionClass, fileID: fileID, version: version, vaultID: keyring.vaultID)
        switch FileKeyWrapKind(for: protectionClass) {
        case .classKey:
            guard let classKey = keyring.key(for: protectionClass) else { throw .permissionDenied }
            self.init(kind: .classKey, ephemeralPublicKey: Self.noEphemeralKey,
                      sealedKey: XChaCha20Poly1305.wrap(fileKey, authenticating: ad, with: classKey))
        case .ephemeralX25519:
            let classPublicKey = keyring.classBPublicKey
            guard classPublicKey.count == X25519.publicKeyByteCount else { throw .permissionDenied }
            // The ephemeral secret, the shared secret and the wrap key live in key slots and
            // are wiped when these locals go out of scope.
            let ephemeralSecret = X25519.generatePrivateKey()
            let ephemeralPublicKey = X25519.publicKey(for: ephemeralSecret)
            let shared: LockedKey
            // A low-order public key can only come from a damaged keyring.
            do { shared = try X25519.sharedSecret(privateKey: ephemeralSecret, peerPublicKey: classPublicKey) } catch { throw .io }
            let wrapKey = Self.classBWrapKey(shared: shared, ephemeralPublicKey: ephemeralPublicKey,
                                             classPublicKey: classPublicKey, keyring: keyring, fileID: fileID)
            self.init(kind: .ephemeralX25519, ephemeralPublicKey: ephemeralPublicKey,
                      sealedKey: XChaCha20Poly1305.wrap(fileKey, authenticating: ad, with: wrapKey))
        }
    }

    /// Unwraps the per-file key: `EACCES` when the class key (for `completeUnlessOpen`, its
    /// private key) is not installed, `EIO` when authentication fails.
    func unwrap(for protectionClass: ProtectionClass, fileID: ObjectID, version: UInt16, keyring: any ClassKeySource) throws(Errno) -> LockedKey {
        guard let classKey = keyring.key(for: protectionClass) else { throw .permissionDenied }
        let ad = Self.associatedData(protectionClass: protectionClass, fileID: fileID, version: version, vaultID: keyring.vaultID)
        let unwrapKey: LockedKey
        switch kind {
        case .classKey:
            unwrapKey = classKey
        case .ephemeralX25519:
            let shared: LockedKey
            do { shared = try X25519.sharedSecret(privateKey: classKey, peerPublicKey: ephemeralPublicKey) } catch { throw .io }
            unwrapKey = Self.classBWrapKey(shared: shared, ephemeralPublicKey: ephemeralPublicKey,
                                           classPublicKey: keyring.classBPublicKey, keyring: keyring, fileID: fileID)
        }
        do { return try XChaCha20Poly1305.unwrap(sealedKey, authenticating: ad, with: unwrapKey) } catch { throw .io }
    }

    /// `"PFSF" || version || vault id || file id || class id`, with the header's version.
    private static func associatedData(protectionClass: ProtectionClass, fileID: ObjectID, version: UInt16,
                                       vaultID: ObjectID) -> [UInt8] {
        var ad = FileHeader.magic
        withUnsafeBytes(of: version.littleEndian) { ad.append(contentsOf: $0) }
        ad += vaultID.bytes
        ad += fileID.bytes
        ad.append(protectionClass.rawValue)
        return ad
    }

    private static func classBWrapKey(shared: LockedKey, ephemeralPublicKey: [UInt8], classPublicKey: [UInt8],
                                      keyring: any ClassKeySource, fileID: ObjectID) -> LockedKey {
        var hash = BLAKE2b(outputByteCount: LockedKey.byteCount)
        hash.update(classBWrapContext)
        hash.update(shared)
        hash.update(ephemeralPublicKey)
        hash.update(classPublicKey)
        hash.update(keyring.vaultID.bytes)
        hash.update(fileID.bytes)
        return hash.finalizeKey()
    }
}
