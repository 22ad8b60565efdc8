import CTss2

/// The bytes protfs keeps of a sealed secret (docs/FORMAT.md, "Sealed key files"): what
/// it is, how to make its storage root again, the PCRs it is bound to, the storage root's
/// name (so another TPM is told as such before anything is sent to it), and the sealed
/// object's public and private parts as the TPM marshals them.
struct SealedBlob: Equatable {
    static let magic = Array("PFTPMSLD".utf8)
    static let version: UInt16 = 1
    /// Far more than a sealed object takes (its private part is under 200 bytes, the public
    /// under 100); anything longer is refused unread.
    static let maximumByteCount = 2048

    enum Kind: UInt8 {
        case deviceKey = 1
        case passcodeSecret = 2
    }

    let kind: Kind
    let root: StorageRootAlgorithm
    let pcrs: PCRSelection
    let rootName: [UInt8]
    let publicPart: [UInt8]
    let privatePart: [UInt8]

    func encoded() -> [UInt8] {
        var out = Self.magic
        out += withUnsafeBytes(of: Self.version.littleEndian, Array.init)
        out += [kind.rawValue, root.rawValue]
        out += withUnsafeBytes(of: pcrs.mask.littleEndian, Array.init)
        for part in [rootName, publicPart, privatePart] {
            out += withUnsafeBytes(of: UInt16(part.count).littleEndian, Array.init)
            out += part
        }
        return out
    }

    /// Whether `bytes` start like a sealed blob: what tells a sealed key file from a plain one.
    static func isSealed(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    init(kind: Kind, root: StorageRootAlgorithm, pcrs: PCRSelection, rootName: [UInt8], publicPart: [UInt8], privatePart: [UInt8]) {
        self.kind = kind
        self.root = root
        self.pcrs = pcrs
        self.rootName = rootName
        self.publicPart = publicPart
        self.privatePart = privatePart
    }

    init(decoding bytes: [UInt8], expecting expected: Kind) throws(TPMError) {
        guard bytes.count <= Self.maximumByteCount, bytes.count >= 16, Self.isSealed(bytes) else {
            throw .malformed(reason: "it is not a protfs sealed blob")
        }
        var reader = Reader(bytes: bytes, offset: Self.magic.count)
        let version = UInt16(try reader.take(2))
        guard version == Self.version else { throw .malformed(reason: "sealed blob version \(version) is unknown to this protfs") }
        guard let kind = Kind(rawValue: UInt8(try reader.take(1))), kind == expected else {
            throw .malformed(reason: "it holds another kind of sealed secret")
        }
        guard let root = StorageRootAlgorithm(rawValue: UInt8(try reader.take(1))) else {
            throw .malformed(reason: "its storage root algorithm is unknown")
        }
        guard let pcrs = PCRSelection(mask: UInt32(try reader.take(4))) else { throw .malformed(reason: "its PCR selection is invalid") }
        self.kind = kind
        self.root = root
        self.pcrs = pcrs
        rootName = try reader.part()
        publicPart = try reader.part()
        privatePart = try reader.part()
        guard reader.offset == bytes.count else { throw .malformed(reason: "it has bytes after its end") }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        mutating func take(_ count: Int) throws(TPMError) -> UInt64 {
            guard offset + count <= bytes.count else { throw .malformed(reason: "it is truncated") }
            defer { offset += count }
            return bytes[offset..<(offset + count)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func part() throws(TPMError) -> [UInt8] {
            let count = Int(try take(2))
            guard offset + count <= bytes.count else { throw .malformed(reason: "it is truncated") }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }
    }
}

/// The TPM's own marshalling of the two halves of a sealed object.
enum Marshalling {
    static func bytes(of value: TPM2B_PUBLIC) throws(TPMError) -> [UInt8] {
        var copy = value
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size)
        var offset = 0
        try ResponseCode(Tss2_MU_TPM2B_PUBLIC_Marshal(&copy, &buffer, buffer.count, &offset)).check("marshalling")
        return Array(buffer.prefix(offset))
    }

    static func bytes(of value: TPM2B_PRIVATE) throws(TPMError) -> [UInt8] {
        var copy = value
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        try ResponseCode(Tss2_MU_TPM2B_PRIVATE_Marshal(&copy, &buffer, buffer.count, &offset)).check("marshalling")
        return Array(buffer.prefix(offset))
    }

    static func publicPart(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PUBLIC {
        var value = TPM2B_PUBLIC()
        var offset = 0
        guard Tss2_MU_TPM2B_PUBLIC_Unmarshal(bytes, bytes.count, &offset, &value) == TSS2_RC_SUCCESS, offset == bytes.count else {
            throw .malformed(reason: "its public part does not parse")
        }
        return value
    }

    static func privatePart(_ bytes: [UInt8]) throws(TPMError) -> TPM2B_PRIVATE {
        var value = TPM2B_PRIVATE()
        var offset = 0
        guard Tss2_MU_TPM2B_PRIVATE_Unmarshal(bytes, bytes.count, &offset, &value) == TSS2_RC_SUCCESS, offset == bytes.count else {
            throw .malformed(reason: "its private part does not parse")
        }
        return value
    }
}
