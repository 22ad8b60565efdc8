import Glibc
import ProtfsControl
import ProtfsControlClient
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain

/// The daemon's answers to `protfsctl`: the control server checks who asks, this does it.
final class DaemonControl: ControlHandler {
    let controller: LockController
    let vault: Vault
    let fileSystem: VaultFileSystem
    let mountpoint: String

    init(controller: LockController, vault: Vault, fileSystem: VaultFileSystem, mountpoint: String) {
        self.controller = controller
        self.vault = vault
        self.fileSystem = fileSystem
        self.mountpoint = mountpoint
    }

    func status() -> StatusReport {
        StatusReport(state: controller.state, graceSecondsLeft: controller.graceSecondsLeft, pid: getpid(),
                     mountpoint: mountpoint, backing: vault.backingPath, passcodeSet: vault.passcodeSet,
                     grace: controller.grace, autolock: controller.autolock, failedAttempts: vault.failedAttempts,
                     retryAfterSeconds: vault.retryAfterSeconds)
    }

    func lock(_ request: LockRequest) throws(ControlFailure) {
        controller.lock(request)
    }

    func unlock(passcode: SecureBuffer) throws(ControlFailure) {
        do {
            try controller.unlock(passcode: passcode)
        } catch {
            throw ControlFailure(error.exitCode, error.description)
        }
    }

    func changePasscode(old: SecureBuffer, new: SecureBuffer) throws(ControlFailure) {
        do {
            try vault.changePasscode(old: old, new: new)
        } catch {
            throw ControlFailure(error.exitCode, error.description)
        }
    }

    func backingPath(of components: [[UInt8]]) throws(ControlFailure) -> String {
        do {
            return try fileSystem.backingRelativePath(of: components)
        } catch {
            throw ControlFailure(error == .noEntry ? .notFound : .failure, "cannot find that path on the mount: \(error)")
        }
    }

    func watch(_ listener: @escaping @Sendable (LockEvent) -> Bool) -> LockState {
        controller.watch(listener)
    }
}
