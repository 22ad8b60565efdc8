import ProtfsFormat

extension Keybag {
    /// The checks that follow the MAC: an older generation than the recorded one is a
    /// rollback; Argon2id parameters below the minimum are refused; a newer generation is
    /// recorded. A missing state records nothing (that would start a new counter at zero):
    /// passcodes are refused until it is restored or re-created (`VaultState`).
    public func admit(into state: inout VaultState) throws(VaultError) {
        guard generation >= state.generation else {
            throw .keybagRollback(found: generation, recorded: state.generation)
        }
        guard kdf.meetsMinimum else { throw .keybagWeakParameters(opsLimit: kdf.opsLimit, memLimit: kdf.memLimit) }
        if generation > state.generation, !state.isMissing { try state.record(generation: generation) }
    }
}
