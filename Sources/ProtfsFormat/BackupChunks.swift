import ProtfsCrypto

/// The body of an archive: plaintext records cut into 64 KiB chunks, each sealed like file
/// contents (XChaCha20-Poly1305, random nonce) with the header, the chunk index and a
/// last-chunk flag as associated data, so a changed, reordered, dropped or cut chunk does not
/// open. Nothing follows the last chunk.
package enum BackupChunks {
    package static let plaintextByteCount = 64 * 1024
    package static let sealedByteCount = plaintextByteCount + XChaCha20Poly1305.overhead

    package static func associatedData(prefix: [UInt8], index: UInt64, last: Bool) -> [UInt8] {
        var ad = prefix
        ad.appendLittleEndian(index)
        ad.append(last ? 1 : 0)
        return ad
    }
}
