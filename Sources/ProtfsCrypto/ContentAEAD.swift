import CProtfsCrypto

/// The AEAD a vault seals file contents with, chosen at `init` and recorded in its keybag
/// (docs/FORMAT.md, "Contents"). Both take a 24-byte nonce field and a 16-byte tag, so a
/// sealed chunk has the same size, and a backing size means the same plaintext size, with
/// either: sizes never need the keybag.
public enum ContentAEAD: UInt8, Sendable, CaseIterable {
    /// XChaCha20-Poly1305-IETF with a random 192-bit nonce: every vault made before the
    /// choice existed, and the default on CPUs without AES instructions.
    case xchacha20Poly1305 = 0
    /// AES-256-GCM with a random 192-bit IV (GHASH derives the initial counter from it).
    case aes256GCM = 1

    public static let nonceByteCount = 24
    public static let tagByteCount = 16
    public static let overhead = nonceByteCount + tagByteCount

    /// The name `protfs init --cipher` takes and `status` prints.
    public var name: String {
        switch self {
        case .xchacha20Poly1305: "xchacha20-poly1305"
        case .aes256GCM: "aes-256-gcm"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// AES-256-GCM where the CPU computes AES and GHASH in hardware (then it is the faster
    /// and constant-time one), else XChaCha20-Poly1305, which is constant-time in software.
    public static var preferredOnThisCPU: ContentAEAD {
        protfs_cpu_has_aes_gcm() == 1 ? .aes256GCM : .xchacha20Poly1305
    }
}
