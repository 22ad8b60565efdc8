import CSodium
import ProtfsCrypto

/// The randomized cross-check of the content cipher's XChaCha20-Poly1305 (OpenSSL's
/// ChaCha20-Poly1305 under libsodium's HChaCha20 subkey) against libsodium's own: the input
/// gives the key, the nonce, the associated data and the text, and each library must open,
/// to the same text, what the other sealed; a changed byte must fail in both.
enum CipherCrossCheck {
    static func run(_ input: [UInt8]) {
        guard input.count >= 57 else { return }
        let keyBytes = Array(input[0..<32]), nonce = Array(input[32..<56])
        let adLength = min(Int(input[56]), input.count - 57)
        let ad = Array(input[57..<(57 + adLength)]), plaintext = Array(input[(57 + adLength)...])
        let key = keyBytes.withUnsafeBytes { try! LockedKey.copying($0) }
        let cipher = ContentCipher(.xchacha20Poly1305, key: key)

        // libsodium seals under the input's nonce; OpenSSL opens.
        var body = [UInt8](repeating: 0, count: plaintext.count + ContentAEAD.tagByteCount)
        var written: UInt64 = 0
        precondition(crypto_aead_xchacha20poly1305_ietf_encrypt(&body, &written, plaintext, UInt64(plaintext.count), ad,
                                                                UInt64(ad.count), nil, nonce, keyBytes) == 0)
        let bySodium = nonce + body
        precondition(open(bySodium, ad: ad, with: cipher) == plaintext, "OpenSSL does not open what libsodium sealed")

        // OpenSSL seals under a fresh nonce; libsodium opens.
        var byOpenSSL = [UInt8](repeating: 0, count: plaintext.count + ContentAEAD.overhead)
        plaintext.withUnsafeBytes { p in
            ad.withUnsafeBytes { a in byOpenSSL.withUnsafeMutableBytes { cipher.seal(p, authenticating: a, into: $0) } }
        }
        precondition((try? XChaCha20Poly1305.open(byOpenSSL, authenticating: ad, with: key)) == plaintext,
                     "libsodium does not open what OpenSSL sealed")

        // A changed byte (chosen by the input) fails in both.
        var changed = bySodium
        changed[Int(input[0]) % changed.count] ^= 0x01
        precondition(open(changed, ad: ad, with: cipher) == nil, "OpenSSL opened a changed chunk")
        precondition((try? XChaCha20Poly1305.open(changed, authenticating: ad, with: key)) == nil, "libsodium opened a changed chunk")
    }

    private static func open(_ sealed: [UInt8], ad: [UInt8], with cipher: ContentCipher) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: sealed.count - ContentAEAD.overhead)
        let opened = sealed.withUnsafeBytes { s in
            ad.withUnsafeBytes { a in
                out.withUnsafeMutableBytes { o in (try? cipher.open(s, authenticating: a, into: o)) != nil }
            }
        }
        return opened ? out : nil
    }
}
