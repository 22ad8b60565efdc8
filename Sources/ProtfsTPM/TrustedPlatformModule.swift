import CTss2
import ProtfsCrypto

/// A TPM 2.0 reached through a TCTI, as protfs uses it: seal a 32-byte secret under the
/// storage root key (bound to PCRs, or to an auth value the TPM's dictionary-attack
/// protection guards), unseal it into locked memory, read the lockout state. Each call opens
/// its own connection and flushes everything it loaded before it returns.
public struct TrustedPlatformModule: Sendable {
    /// The kernel's resource manager.
    public static let defaultTCTI = "device:/dev/tpmrm0"
    /// Where the TCTI comes from when `-o tpm2_tcti=` does not say.
    public static let tctiVariable = "PROTFS_TPM2_TCTI"

    public let tcti: String

    public init(tcti: String) { self.tcti = tcti }

    /// Whether `bytes` are a sealed blob rather than a plain key.
    public static func isSealed(_ bytes: [UInt8]) -> Bool { SealedBlob.isSealed(bytes) }

    // MARK: the device key

    /// Seals `key` so that only this TPM opens it, and only while `pcrs` hold their values of
    /// now. The auth value is empty and the object is exempt from dictionary-attack counting:
    /// there is nothing to guess.
    public func sealDeviceKey(_ key: LockedKey, pcrs: PCRSelection) throws(TPMError) -> [UInt8] {
        try seal(key, kind: .deviceKey, pcrs: pcrs, auth: nil).encoded()
    }

    public func unsealDeviceKey(_ bytes: [UInt8]) throws(TPMError) -> LockedKey {
        try unseal(SealedBlob(decoding: bytes, expecting: .deviceKey), auth: nil)
    }

    // MARK: the passcode secret

    /// Seals `secret` under the auth value `auth` (derived from the passcode, never the
    /// passcode), counted by the dictionary-attack protection: every wrong `auth` is a
    /// failure the TPM records.
    public func sealPasscodeSecret(_ secret: LockedKey, auth: LockedKey) throws(TPMError) -> [UInt8] {
        try seal(secret, kind: .passcodeSecret, pcrs: .none, auth: auth).encoded()
    }

    /// A wrong `auth` throws `authorizationFailed` (counted), a TPM in lockout `lockout`
    /// with its state.
    public func unsealPasscodeSecret(_ bytes: [UInt8], auth: LockedKey) throws(TPMError) -> LockedKey {
        try unseal(SealedBlob(decoding: bytes, expecting: .passcodeSecret), auth: auth)
    }

    /// The dictionary-attack counter, limit and interval.
    public func lockout() throws(TPMError) -> TPMLockout {
        try TPMConnection(tcti: tcti).lockout()
    }

    // MARK: sealing

    private func seal(_ secret: LockedKey, kind: SealedBlob.Kind, pcrs: PCRSelection, auth: LockedKey?) throws(TPMError) -> SealedBlob {
        let connection = try TPMConnection(tcti: tcti)
        let root = try connection.createStorageRoot(nil)
        var policy = try connection.pcrPolicyDigest(pcrs, root: root)
        var template = protfs_tpm_sealed_template(&policy, auth == nil ? 1 : 0)
        let session = try connection.startSession(TPM2_SE_HMAC, saltedWith: root)
        try connection.protect(session, TPMA_SESSION(TPMA_SESSION_DECRYPT))
        // The secret and its auth value go in through locked memory, wiped when it goes.
        let sensitive = SecureBuffer(count: MemoryLayout<TPM2B_SENSITIVE_CREATE>.size)
        var outside = TPM2B_DATA()
        var creation = TPML_PCR_SELECTION()
        var privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
        let code = sensitive.withUnsafeMutableBytes { raw in
            let create = raw.baseAddress!.bindMemory(to: TPM2B_SENSITIVE_CREATE.self, capacity: 1)
            secret.withUnsafeBytes { bytes in
                withUnsafeMutableBytes(of: &create.pointee.sensitive.data.buffer) { $0.copyMemory(from: bytes) }
            }
            create.pointee.sensitive.data.size = UInt16(LockedKey.byteCount)
            auth?.withUnsafeBytes { bytes in
                withUnsafeMutableBytes(of: &create.pointee.sensitive.userAuth.buffer) { $0.copyMemory(from: bytes) }
                create.pointee.sensitive.userAuth.size = UInt16(LockedKey.byteCount)
            }
            return Esys_Create(connection.context, root.handle.handle, session.handle, ESYS_TR_NONE, ESYS_TR_NONE, create,
                               &template, &outside, &creation, &privatePart, &publicPart, nil, nil, nil)
        }
        defer { Esys_Free(privatePart); Esys_Free(publicPart) }
        try ResponseCode(code).check("sealing")
        guard let privatePart, let publicPart else { throw .failed(operation: "sealing", code: code) }
        return SealedBlob(kind: kind, root: root.algorithm, pcrs: pcrs, rootName: root.name,
                          publicPart: try Marshalling.bytes(of: publicPart.pointee),
                          privatePart: try Marshalling.bytes(of: privatePart.pointee))
    }

    private func unseal(_ blob: SealedBlob, auth: LockedKey?) throws(TPMError) -> LockedKey {
        var privatePart = try Marshalling.privatePart(blob.privatePart)
        var publicPart = try Marshalling.publicPart(blob.publicPart)
        let connection = try TPMConnection(tcti: tcti)
        let root = try connection.createStorageRoot(blob.root)
        // Another storage root: another TPM, or a cleared owner hierarchy. Said before
        // anything is salted to a key that could be an impostor's.
        guard ConstantTime.equal(root.name, blob.rootName) else { throw .differentTPM }
        let session = try connection.startSession(blob.pcrs.isEmpty ? TPM2_SE_HMAC : TPM2_SE_POLICY, saltedWith: root)
        var objectHandle: ESYS_TR = ESYS_TR_NONE
        let loaded = ResponseCode(Esys_Load(connection.context, root.handle.handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                            &privatePart, &publicPart, &objectHandle))
        if loaded.isIntegrityFailure { throw .differentTPM }
        try loaded.check("load of the sealed object")
        let object = TransientHandle(connection: connection, handle: objectHandle)
        if let auth {
            var value = TPM2B_AUTH()
            value.size = UInt16(LockedKey.byteCount)
            auth.withUnsafeBytes { bytes in withUnsafeMutableBytes(of: &value.buffer) { $0.copyMemory(from: bytes) } }
            let set = Esys_TR_SetAuth(connection.context, object.handle, &value)
            withUnsafeMutableBytes(of: &value) { secureZero($0) }
            try ResponseCode(set).check("set-up of the auth value")
        }
        if !blob.pcrs.isEmpty { try connection.policyPCR(session, blob.pcrs) }
        try connection.protect(session, TPMA_SESSION(TPMA_SESSION_ENCRYPT))
        var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        let unsealed = ResponseCode(Esys_Unseal(connection.context, object.handle, session.handle, ESYS_TR_NONE, ESYS_TR_NONE, &data))
        defer {
            if let data { withUnsafeMutableBytes(of: &data.pointee) { secureZero($0) } }
            Esys_Free(data)
        }
        if unsealed.isPolicyFailure { throw .pcrMismatch(pcrs: blob.pcrs) }
        if unsealed.isLockout { throw .lockout(try? connection.lockout()) }
        try unsealed.check("unsealing")
        guard let data, Int(data.pointee.size) == LockedKey.byteCount else {
            throw .malformed(reason: "the sealed secret is not 32 bytes")
        }
        return LockedKey.make { slot in
            withUnsafeBytes(of: data.pointee.buffer) { slot.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(LockedKey.byteCount))) }
        }
    }
}
