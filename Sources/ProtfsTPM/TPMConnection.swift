import CTss2

/// One ESAPI context over one TCTI, closed when the last reference goes. Every handle made
/// through it is a `TransientHandle` that holds it, so the context outlives its handles.
final class TPMConnection {
    let context: OpaquePointer
    private let tcti: OpaquePointer

    /// Opens `tcti` (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`, ...).
    init(tcti configuration: String) throws(TPMError) {
        var tcti: OpaquePointer?
        let loaded = Tss2_TctiLdr_Initialize(configuration, &tcti)
        guard loaded == TSS2_RC_SUCCESS, let tcti else {
            throw .unavailable(tcti: configuration, reason: TPMError.decode(loaded))
        }
        var context: OpaquePointer?
        let started = Esys_Initialize(&context, tcti, nil)
        guard started == TSS2_RC_SUCCESS, let context else {
            var owned: OpaquePointer? = tcti
            Tss2_TctiLdr_Finalize(&owned)
            throw .unavailable(tcti: configuration, reason: TPMError.decode(started))
        }
        self.context = context
        self.tcti = tcti
    }

    deinit {
        var context: OpaquePointer? = context
        Esys_Finalize(&context)
        var tcti: OpaquePointer? = tcti
        Tss2_TctiLdr_Finalize(&tcti)
    }

    /// The dictionary-attack properties (`TPM_PT_LOCKOUT_COUNTER` through
    /// `TPM_PT_LOCKOUT_RECOVERY`).
    func lockout() throws(TPMError) -> TPMLockout {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        try ResponseCode(Esys_GetCapability(context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                            protfs_pt_lockout_counter, 3, &more, &data)).check("read of the lockout state")
        defer { Esys_Free(data) }
        var values: [UInt32: UInt32] = [:]
        if let data {
            let properties = data.pointee.data.tpmProperties
            withUnsafeBytes(of: properties.tpmProperty) { raw in
                let list = raw.bindMemory(to: TPMS_TAGGED_PROPERTY.self)
                for index in 0..<min(Int(properties.count), list.count) { values[list[index].property] = list[index].value }
            }
        }
        return TPMLockout(failures: values[protfs_pt_lockout_counter] ?? 0, limit: values[protfs_pt_max_auth_fail] ?? 0,
                          interval: .seconds(values[protfs_pt_lockout_interval] ?? 0))
    }
}

/// A transient object or session in the TPM, flushed when this goes out of scope, whatever
/// the path: without a resource manager (swtpm, or `/dev/tpm0`) an unflushed handle stays
/// in the TPM's few slots until it is reset.
struct TransientHandle: ~Copyable {
    let connection: TPMConnection
    let handle: ESYS_TR

    deinit { _ = Esys_FlushContext(connection.context, handle) }
}
