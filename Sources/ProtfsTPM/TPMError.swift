import CTss2

/// What went wrong talking to the TPM, in the words a user needs: which TPM, which PCRs,
/// how long a lockout lasts. No case carries a secret.
public enum TPMError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The TCTI could not be opened: no TPM there (or no access to it).
    case unavailable(tcti: String, reason: String)
    /// The TPM refuses authorizations until its dictionary-attack counter has come down.
    case lockout(TPMLockout?)
    /// A wrong auth value, counted by the TPM's dictionary-attack protection.
    case authorizationFailed
    /// The PCRs the seal is bound to hold other values now.
    case pcrMismatch(pcrs: PCRSelection)
    /// The storage root key is not the one that sealed: another TPM, or this one with its
    /// owner hierarchy cleared since.
    case differentTPM
    /// A sealed blob this build cannot read.
    case malformed(reason: String)
    /// The owner hierarchy has a password protfs does not know.
    case ownerAuthorizationRequired
    /// Any other refusal, with the TPM's response code.
    case failed(operation: String, code: UInt32)

    public var description: String {
        switch self {
        case .unavailable(let tcti, let reason):
            "no TPM at \(tcti) (\(reason)); choose one with -o tpm2_tcti= or PROTFS_TPM2_TCTI"
        case .lockout(let lockout):
            "the TPM is in dictionary-attack lockout after too many wrong passcodes and refuses every attempt, "
                + "the right passcode included" + (lockout.map { "; \($0.nextAttemptDescription)" } ?? "")
        case .authorizationFailed:
            "the TPM refused the authorization (counted by its dictionary-attack protection)"
        case .pcrMismatch(let pcrs):
            "the TPM refuses to unseal the device key: PCR \(pcrs) hold other values than when it was sealed "
                + "(the boot state changed); boot as it was, or restore the vault from a backup"
        case .differentTPM:
            "the device key was sealed by another TPM, or this TPM's owner hierarchy was cleared since: "
                + "this TPM cannot open it; restore the vault from a backup"
        case .malformed(let reason):
            "the sealed device key file is damaged: \(reason)"
        case .ownerAuthorizationRequired:
            "the TPM's owner hierarchy has a password; protfs seals under an owner hierarchy without one"
        case .failed(let operation, let code):
            "TPM \(operation) failed: \(Self.decode(code)) (0x\(String(code, radix: 16)))"
        }
    }

    static func decode(_ code: UInt32) -> String {
        guard let text = Tss2_RC_Decode(code) else { return "unknown response" }
        return String(cString: text)
    }
}

/// A TPM response code, reduced to what protfs tells apart.
struct ResponseCode {
    let raw: TSS2_RC

    init(_ raw: TSS2_RC) { self.raw = raw }

    var isSuccess: Bool { raw == TSS2_RC_SUCCESS }

    /// The code without the layer and without the handle, session or parameter number that
    /// format-1 codes carry (bits 6 and 8-11).
    private var base: UInt32 {
        let tpm = raw & 0xFFFF
        return tpm & 0x80 != 0 ? tpm & 0xBF : tpm
    }

    private var fromTPM: Bool { raw & 0xFF_0000 == protfs_tpm_layer || raw & 0xFF_0000 == protfs_tpm_resource_manager_layer }

    private func isOne(of codes: TPM2_RC...) -> Bool { fromTPM && codes.contains(base) }

    var isLockout: Bool { isOne(of: protfs_rc_lockout) }
    var isAuthorizationFailure: Bool { isOne(of: protfs_rc_auth_fail, protfs_rc_bad_auth) }
    var isPolicyFailure: Bool { isOne(of: protfs_rc_policy_fail, protfs_rc_pcr_changed) }
    var isIntegrityFailure: Bool { isOne(of: protfs_rc_integrity, protfs_rc_binding) }
    var isUnsupported: Bool {
        isOne(of: protfs_rc_curve, protfs_rc_asymmetric, protfs_rc_value, protfs_rc_key_size, protfs_rc_symmetric)
    }

    /// Throws the error the code stands for, `operation` naming it when nothing more
    /// specific fits.
    func check(_ operation: String) throws(TPMError) {
        guard !isSuccess else { return }
        if isLockout { throw .lockout(nil) }
        if isAuthorizationFailure { throw .authorizationFailed }
        throw .failed(operation: operation, code: raw)
    }
}
