import CSodium

/// libsodium must be initialised once per process before any other call; every
/// entry point of this module goes through `Sodium.ready` so callers never have to.
enum Sodium {
    static let ready: Bool = {
        // sodium_init returns 1 when already initialised, -1 only if the RNG cannot be set up.
        precondition(sodium_init() >= 0, "libsodium could not be initialised")
        return true
    }()

    @inline(__always) static func ensure() { _ = ready }
}

/// Errors of the crypto layer. Messages never carry key material or plaintext.
public enum CryptoError: Error, Equatable, Sendable {
    /// A sealed value failed authentication: tampered, foreign, or the wrong key.
    case authenticationFailed
    /// An input had the wrong size for the construction.
    case invalidLength
    /// X25519 produced the all-zero shared secret (a low-order public key).
    case weakPublicKey
    /// Argon2id could not run (usually: not enough memory for its parameters).
    case passwordHashFailed
}
