import ProtfsCrypto
import ProtfsSystem

/// Seals and opens one content chunk of one file. The associated data
/// `file id || index (u64 LE) || last (u8)` binds a chunk to its file and its place, and
/// marks the final chunk so that cutting a file at a chunk boundary is detected.
/// The AEAD is the vault's (`ContentAEAD`, from its keybag); its contexts are held here for
/// the file's lifetime. Works between caller buffers and builds the associated data on the
/// stack: nothing is allocated per chunk.
public struct ChunkCipher: Sendable {
    static let associatedDataByteCount = ObjectID.byteCount + 8 + 1

    private let cipher: ContentCipher
    private let fileID: ObjectID

    public init(fileKey: LockedKey, fileID: ObjectID, aead: ContentAEAD) {
        cipher = ContentCipher(aead, key: fileKey)
        self.fileID = fileID
    }

    /// The key schedules this file's cipher holds (what the lock's key census counts).
    public var keyScheduleCount: Int { cipher.contextCount }

    /// Seals `plaintext` (at most one chunk) into `sealed` (exactly `plaintext.count + 40` bytes).
    public func seal(_ plaintext: UnsafeRawBufferPointer, index: Int64, isLast: Bool,
                     into sealed: UnsafeMutableRawBufferPointer) {
        withAssociatedData(index: index, isLast: isLast) { ad in
            cipher.seal(plaintext, authenticating: ad, into: sealed)
        }
    }

    /// Opens `sealed` into `plaintext` (exactly `sealed.count - 40` bytes). An all-zero
    /// stored chunk is a hole and opens to zeros. Throws `EIO` when authentication fails;
    /// `plaintext` is then zeroed.
    public func open(_ sealed: UnsafeRawBufferPointer, index: Int64, isLast: Bool,
                     into plaintext: UnsafeMutableRawBufferPointer) throws(Errno) {
        guard sealed.count == plaintext.count + ContentLayout.chunkOverhead else { throw .io }
        let opened = withAssociatedData(index: index, isLast: isLast) { ad in
            Result { () throws(CryptoError) in try cipher.open(sealed, authenticating: ad, into: plaintext) }
        }
        // Holes are rare: look for one only when authentication fails, rather than scanning
        // every chunk first.
        guard case .success = opened else {
            guard ConstantTime.isZero(sealed) else { throw .io }
            plaintext.initializeMemory(as: UInt8.self, repeating: 0)
            return
        }
    }

    private func withAssociatedData<R>(index: Int64, isLast: Bool, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: Self.associatedDataByteCount, alignment: 8) { ad in
            fileID.bytes.withUnsafeBytes { ad.copyMemory(from: $0) }
            ad.storeBytes(of: UInt64(index).littleEndian, toByteOffset: ObjectID.byteCount, as: UInt64.self)
            ad[ObjectID.byteCount + 8] = isLast ? 1 : 0
            return body(UnsafeRawBufferPointer(ad))
        }
    }
}
