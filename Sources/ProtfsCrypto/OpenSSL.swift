import COpenSSL
import CProtfsCrypto

/// OpenSSL's libcrypto for the content ciphers. Its first use routes OpenSSL's allocator to
/// the locked heap (`CProtfsCrypto`), so the key schedules and cipher states it allocates are
/// locked, left out of core dumps and wiped when freed; in the daemon nothing calls OpenSSL
/// before the first file is opened, so the routing is in place before OpenSSL's first
/// allocation. A process that used OpenSSL before (the Secret Service's session) keeps the
/// system allocator: `lockedHeap.installed` says which.
enum OpenSSL {
    struct Ciphers: @unchecked Sendable {
        let chacha20Poly1305: OpaquePointer
        let aes256GCM: OpaquePointer
    }

    /// The two ciphers, fetched once (a fetch per context would look them up by name each time).
    static let ciphers: Ciphers = {
        _ = protfs_locked_heap_install()
        guard let chacha = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil),
              let aes = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            fatalError("OpenSSL lacks ChaCha20-Poly1305 or AES-256-GCM")
        }
        return Ciphers(chacha20Poly1305: chacha, aes256GCM: aes)
    }()
}

/// What the locked heap under OpenSSL holds, for tests and `status`.
public enum OpenSSLLockedHeap {
    public struct Usage: Sendable, Equatable {
        /// OpenSSL allocates in locked memory in this process.
        public let installed: Bool
        /// The kernel refused to lock some of it (RLIMIT_MEMLOCK).
        public let lockFailed: Bool
        public let mappedBytes: Int
        public let liveAllocations: Int
    }

    public static var usage: Usage {
        _ = OpenSSL.ciphers
        let u = protfs_locked_heap_usage()
        return Usage(installed: u.installed == 1, lockFailed: u.lock_failed == 1,
                     mappedBytes: Int(u.mapped_bytes), liveAllocations: Int(u.live_allocations))
    }

    /// True when `address` lies in the locked heap (a test's check that a context is there).
    public static func contains(_ address: UnsafeRawPointer) -> Bool {
        protfs_locked_heap_contains(address) == 1
    }
}
