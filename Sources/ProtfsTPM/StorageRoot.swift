import CTss2

/// The primary key protfs seals under: made afresh from the owner hierarchy's seed with
/// the template systemd uses for its SRK, so it is the same key every time on the same TPM
/// (and another on any other TPM, or after the owner hierarchy is cleared).
enum StorageRootAlgorithm: UInt8, Sendable {
    case ellipticCurveP256 = 1
    case rsa2048 = 2
}

/// The storage root key loaded in the TPM, with what makes it again and its name.
struct StorageRoot: ~Copyable {
    let handle: TransientHandle
    let algorithm: StorageRootAlgorithm
    let name: [UInt8]
}

extension TPMConnection {
    /// The storage root key; `preferred` first, RSA when the TPM has no P-256.
    func createStorageRoot(_ preferred: StorageRootAlgorithm?) throws(TPMError) -> StorageRoot {
        let algorithm = preferred ?? .ellipticCurveP256
        var template = protfs_tpm_srk_template(algorithm == .ellipticCurveP256 ? 1 : 0)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var outside = TPM2B_DATA()
        var creation = TPML_PCR_SELECTION()
        var handle: ESYS_TR = ESYS_TR_NONE
        let code = ResponseCode(Esys_CreatePrimary(context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                                   &sensitive, &template, &outside, &creation, &handle, nil, nil, nil, nil))
        if code.isUnsupported && preferred == nil { return try createStorageRoot(.rsa2048) }
        if code.isAuthorizationFailure { throw .ownerAuthorizationRequired }
        try code.check("creation of the storage root key")
        let root = TransientHandle(connection: self, handle: handle)
        let name = try name(of: root)
        return StorageRoot(handle: root, algorithm: algorithm, name: name)
    }

    func name(of object: borrowing TransientHandle) throws(TPMError) -> [UInt8] {
        var name: UnsafeMutablePointer<TPM2B_NAME>?
        try ResponseCode(Esys_TR_GetName(context, object.handle, &name)).check("read of the storage root key's name")
        defer { Esys_Free(name) }
        guard let name else { return [] }
        return withUnsafeBytes(of: name.pointee.name) { Array($0.prefix(Int(name.pointee.size))) }
    }

    /// A session salted with the storage root key (only that TPM can compute its key, so a
    /// listener on the bus learns nothing) whose commands and responses carry their first
    /// parameter encrypted with AES-128-CFB.
    func startSession(_ type: TPM2_SE, saltedWith root: borrowing StorageRoot) throws(TPMError) -> TransientHandle {
        var cipher = protfs_tpm_session_cipher()
        var handle: ESYS_TR = ESYS_TR_NONE
        try ResponseCode(Esys_StartAuthSession(context, root.handle.handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                               nil, type, &cipher, TPM2_ALG_SHA256, &handle)).check("start of a session")
        return TransientHandle(connection: self, handle: handle)
    }

    /// Which way the next command through `session` encrypts: a secret going in (`decrypt`,
    /// as the TPM sees it) or coming out (`encrypt`).
    func protect(_ session: borrowing TransientHandle, _ direction: TPMA_SESSION) throws(TPMError) {
        let flags = TPMA_SESSION(TPMA_SESSION_CONTINUESESSION) | direction
        try ResponseCode(Esys_TRSess_SetAttributes(context, session.handle, flags, 0xFF)).check("set-up of a session")
    }

    /// Extends `session`'s policy with the current values of `pcrs`.
    func policyPCR(_ session: borrowing TransientHandle, _ pcrs: PCRSelection) throws(TPMError) {
        var digest = TPM2B_DIGEST()
        var selection = protfs_tpm_pcr_selection(pcrs.mask)
        try ResponseCode(Esys_PolicyPCR(context, session.handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                        &digest, &selection)).check("PCR policy")
    }

    /// The policy digest of "these PCRs hold the values they hold now" (a trial session).
    func pcrPolicyDigest(_ pcrs: PCRSelection, root: borrowing StorageRoot) throws(TPMError) -> TPM2B_DIGEST {
        guard !pcrs.isEmpty else { return TPM2B_DIGEST() }
        let trial = try startSession(TPM2_SE_TRIAL, saltedWith: root)
        try policyPCR(trial, pcrs)
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        try ResponseCode(Esys_PolicyGetDigest(context, trial.handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                              &digest)).check("PCR policy digest")
        defer { Esys_Free(digest) }
        return digest?.pointee ?? TPM2B_DIGEST()
    }
}
