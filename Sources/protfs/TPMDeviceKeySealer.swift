import Glibc
import ProtfsCore
import ProtfsCrypto
import ProtfsTPM

/// The vault's `DeviceKeySealer` on the machine's TPM (docs/OPERATIONS.md, "The TPM"): the
/// TCTI from `-o tpm2_tcti=`, else `PROTFS_TPM2_TCTI`, else the kernel's resource manager;
/// new device keys bound to `pcrs`. The TPM's words become the vault's errors.
struct TPMDeviceKeySealer: DeviceKeySealer {
    let tpm: TrustedPlatformModule
    let pcrs: PCRSelection

    /// Made while the command has one thread: it sets the environment.
    init(tcti option: String?, pcrs: PCRSelection = .none) {
        // tpm2-tss logs its own errors to standard error; protfs says what failed in its
        // words. A TSS2_LOG the user set stays.
        setenv("TSS2_LOG", "all+none", 0)
        let configured = option ?? getenv(TrustedPlatformModule.tctiVariable).map { String(cString: $0) }
        tpm = TrustedPlatformModule(tcti: configured.flatMap { $0.isEmpty ? nil : $0 } ?? TrustedPlatformModule.defaultTCTI)
        self.pcrs = pcrs
    }

    func seal(_ key: LockedKey, path: String) throws(VaultError) -> [UInt8] {
        try vaultError(path: path) { () throws(TPMError) in try tpm.sealDeviceKey(key, pcrs: pcrs) }
    }

    func unseal(_ contents: [UInt8], path: String) throws(VaultError) -> LockedKey {
        guard TrustedPlatformModule.isSealed(contents) else { throw .deviceKeyWrongSize(path: path, size: contents.count) }
        return try vaultError(path: path) { () throws(TPMError) in try tpm.unsealDeviceKey(contents) }
    }

    func sealPasscodeSecret(_ secret: LockedKey, auth: LockedKey) throws(VaultError) -> [UInt8] {
        do { return try tpm.sealPasscodeSecret(secret, auth: auth) } catch { throw .passcodeSealFailed(reason: error.description) }
    }

    func unsealPasscodeSecret(_ sealed: [UInt8], auth: LockedKey) throws(VaultError) -> LockedKey? {
        do {
            return try tpm.unsealPasscodeSecret(sealed, auth: auth)
        } catch .authorizationFailed {
            return nil
        } catch .lockout(let state) {
            throw .passcodeLockout(retryAfterSeconds: state?.retryAfterSeconds)
        } catch {
            throw .passcodeSealFailed(reason: error.description)
        }
    }

    func lockoutRetryAfterSeconds() -> Int? { (try? tpm.lockout())?.retryAfterSeconds }

    private func vaultError<R>(path: String, _ body: () throws(TPMError) -> R) throws(VaultError) -> R {
        do { return try body() } catch { throw .deviceKeySealFailed(path: path, reason: error.description) }
    }
}
