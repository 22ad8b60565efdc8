import COpenSSL
import CSodium
import Synchronization

/// One file's content AEAD under its file key, through OpenSSL (docs/FORMAT.md, "Contents").
/// Sealed layout for both ciphers: nonce (24) || ciphertext || tag (16).
///
/// - AES-256-GCM: the key schedule is computed once per cipher context and each chunk sets
///   only its IV (the 24 random bytes), which is what makes it fast.
/// - XChaCha20-Poly1305: byte for byte libsodium's IETF construction, as libsodium computes it:
///   subkey = HChaCha20(file key, nonce[0..<16]), then ChaCha20-Poly1305 under the subkey with
///   the 12-byte nonce `0000 || nonce[16..<24]`. The subkey changes with every nonce, so each
///   chunk keys its context; the subkey lives on the stack only until then and is wiped.
///
/// Contexts are made on first use, in one of eight slots (a context serves one chunk at a
/// time; the chunks of one request are opened on every core at once, each claiming a slot
/// with one atomic operation: a lock here was a tenth of a cold read's daemon time). More
/// chunks at once than slots get a context of their own, freed after. Contexts live in
/// OpenSSL's heap, which `OpenSSL` routes to locked memory, and are freed (and wiped) with
/// this object, that is with the file's key: `contextCount` is what the lock's key census
/// counts.
public final class ContentCipher: @unchecked Sendable {
    /// OpenSSL takes lengths as `int`; a chunk is 4 KiB.
    public static let maximumMessageByteCount = 1 << 30
    static let slotCount = 8
    public let aead: ContentAEAD
    private let key: LockedKey
    /// Bit `i` set: slot `i` is claimed, and its context is the claimant's alone.
    private let claimed = Atomic<UInt8>(0)
    private let slots: UnsafeMutablePointer<CipherContext?>
    private let made = Atomic<Int>(0)

    public init(_ aead: ContentAEAD, key: LockedKey) {
        self.aead = aead
        self.key = key
        slots = .allocate(capacity: Self.slotCount)
        slots.initialize(repeating: nil, count: Self.slotCount)
    }

    deinit {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
    }

    /// Cipher contexts (key schedules) this cipher holds: made on demand, freed with it.
    public var contextCount: Int { made.load(ordering: .relaxed) }

    /// Cipher contexts alive in the process, of every file.
    public static var liveContextCount: Int { CipherContext.live.load(ordering: .relaxed) }

    /// Seals `plaintext` into `sealed` (exactly `plaintext.count + 40` bytes) with a fresh
    /// random nonce.
    public func seal(_ plaintext: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer,
                     into sealed: UnsafeMutableRawBufferPointer) {
        precondition(sealed.count == plaintext.count + ContentAEAD.overhead, "sealed buffer has the wrong size")
        precondition(plaintext.count <= Self.maximumMessageByteCount && ad.count <= Self.maximumMessageByteCount)
        SecureRandom.fill(UnsafeMutableRawBufferPointer(rebasing: sealed[0..<ContentAEAD.nonceByteCount]))
        sealKeepingNonce(plaintext, authenticating: ad, into: sealed)
    }

    /// Seals under the nonce already in `sealed`'s first 24 bytes: the known-answer tests' way in.
    func sealKeepingNonce(_ plaintext: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer,
                          into sealed: UnsafeMutableRawBufferPointer) {
        let nonce = UnsafeRawBufferPointer(rebasing: sealed[0..<ContentAEAD.nonceByteCount])
        let body = UnsafeMutableRawBufferPointer(rebasing: sealed[ContentAEAD.nonceByteCount...])
        let ok = withContext { context in
            context.start(encrypting: true, nonce: nonce, fileKey: key)
                && context.update(ad, into: nil)
                && context.update(plaintext, into: body.baseAddress)
                && context.finish(into: body.baseAddress.map { $0 + plaintext.count })
                && context.tag(into: UnsafeMutableRawBufferPointer(rebasing: body[plaintext.count...]))
        }
        precondition(ok, "OpenSSL failed to seal a chunk")
    }

    /// Opens `sealed` into `plaintext` (exactly `sealed.count - 40` bytes). On failure
    /// `plaintext` is zeroed and `.authenticationFailed` thrown.
    public func open(_ sealed: UnsafeRawBufferPointer, authenticating ad: UnsafeRawBufferPointer,
                     into plaintext: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard sealed.count >= ContentAEAD.overhead, plaintext.count == sealed.count - ContentAEAD.overhead,
              plaintext.count <= Self.maximumMessageByteCount, ad.count <= Self.maximumMessageByteCount else {
            throw .invalidLength
        }
        let nonce = UnsafeRawBufferPointer(rebasing: sealed[0..<ContentAEAD.nonceByteCount])
        let ciphertext = UnsafeRawBufferPointer(rebasing: sealed[ContentAEAD.nonceByteCount ..< sealed.count - ContentAEAD.tagByteCount])
        let tag = UnsafeRawBufferPointer(rebasing: sealed[(sealed.count - ContentAEAD.tagByteCount)...])
        let ok = withContext { context in
            context.start(encrypting: false, nonce: nonce, fileKey: key)
                && context.expect(tag: tag)
                && context.update(ad, into: nil)
                && context.update(ciphertext, into: plaintext.baseAddress)
                && context.finish(into: plaintext.baseAddress.map { $0 + plaintext.count })
        }
        guard ok else {
            secureZero(plaintext)
            throw .authenticationFailed
        }
    }

    private func withContext<R>(_ body: (CipherContext) -> R) -> R {
        guard let slot = claimSlot() else {
            made.add(1, ordering: .relaxed)
            defer { made.subtract(1, ordering: .relaxed) }
            return body(CipherContext(aead, fileKey: key))
        }
        defer { claimed.bitwiseAnd(~(1 << UInt8(slot)), ordering: .releasing) }
        if let context = slots[slot] { return body(context) }
        made.add(1, ordering: .relaxed)
        let context = CipherContext(aead, fileKey: key)
        slots[slot] = context
        return body(context)
    }

    /// The lowest free slot, now claimed; nil when all are.
    private func claimSlot() -> Int? {
        var current = claimed.load(ordering: .relaxed)
        while current != UInt8.max {
            let slot = (~current).trailingZeroBitCount
            let (exchanged, original) = claimed.compareExchange(expected: current, desired: current | 1 << UInt8(slot),
                                                                ordering: .acquiring)
            if exchanged { return slot }
            current = original
        }
        return nil
    }
}

/// One `EVP_CIPHER_CTX`: for AES-256-GCM keyed once with the file key, for ChaCha20-Poly1305
/// keyed per chunk with the HChaCha20 subkey. Freed (OpenSSL cleanses it) when it goes.
private final class CipherContext: @unchecked Sendable {
    static let live = Atomic<Int>(0)
    private let context: OpaquePointer
    private let aead: ContentAEAD

    init(_ aead: ContentAEAD, fileKey: LockedKey) {
        let ciphers = OpenSSL.ciphers
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("OpenSSL could not allocate a cipher context") }
        self.context = context
        self.aead = aead
        Self.live.add(1, ordering: .relaxed)
        let ok: Bool = switch aead {
        case .aes256GCM:
            EVP_CipherInit_ex(context, ciphers.aes256GCM, nil, nil, nil, 1) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(ContentAEAD.nonceByteCount), nil) == 1
                && EVP_CipherInit_ex(context, nil, nil, fileKey.pointer, nil, 1) == 1
        case .xchacha20Poly1305:
            EVP_CipherInit_ex(context, ciphers.chacha20Poly1305, nil, nil, nil, 1) == 1
        }
        precondition(ok, "OpenSSL could not set up \(aead.name)")
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        Self.live.subtract(1, ordering: .relaxed)
    }

    /// Starts one message: the IV (and for XChaCha20 the subkey) for `nonce`, and the direction.
    func start(encrypting: Bool, nonce: UnsafeRawBufferPointer, fileKey: LockedKey) -> Bool {
        let direction: Int32 = encrypting ? 1 : 0
        let n = nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)
        switch aead {
        case .aes256GCM:
            return EVP_CipherInit_ex(context, nil, nil, nil, n, direction) == 1
        case .xchacha20Poly1305:
            return withUnsafeTemporaryAllocation(byteCount: LockedKey.byteCount + 12, alignment: 16) { scratch in
                let subkey = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let iv = subkey + LockedKey.byteCount
                defer { sodium_memzero(scratch.baseAddress!, scratch.count) }
                Sodium.ensure()
                guard crypto_core_hchacha20(subkey, n, fileKey.pointer, nil) == 0 else { return false }
                UnsafeMutableRawPointer(iv).initializeMemory(as: UInt8.self, repeating: 0, count: 4)
                (iv + 4).initialize(from: n + 16, count: 8)
                return EVP_CipherInit_ex(context, nil, nil, subkey, iv, direction) == 1
            }
        }
    }

    func expect(tag: UnsafeRawBufferPointer) -> Bool {
        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1
    }

    /// Feeds `input`: associated data when `output` is nil, else text whose result goes there.
    func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer?) -> Bool {
        guard input.count > 0 else { return true }
        var written: Int32 = 0
        let ok = EVP_CipherUpdate(context, output?.assumingMemoryBound(to: UInt8.self), &written,
                                  input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1
        return ok && (output == nil || Int(written) == input.count)
    }

    /// Ends the message: for opening, this is where the tag is checked.
    func finish(into output: UnsafeMutableRawPointer?) -> Bool {
        var written: Int32 = 0
        var spare: UInt8 = 0
        let out = output?.assumingMemoryBound(to: UInt8.self)
        return withUnsafeMutablePointer(to: &spare) { EVP_CipherFinal_ex(context, out ?? $0, &written) } == 1 && written == 0
    }

    func tag(into tag: UnsafeMutableRawBufferPointer) -> Bool {
        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), tag.baseAddress) == 1
    }
}
