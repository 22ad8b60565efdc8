import Glibc
import ProtfsControl
import ProtfsControlProtocol
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsLog
import ProtfsSystem

/// The daemon's answers to `protfsctl`: the control server checks who asks, this does it.
final class DaemonControl: ControlHandler {
    let controller: LockController
    let vault: Vault
    let fileSystem: VaultFileSystem
    let items: ItemStore
    let mountpoint: String
    let log: DaemonLog

    init(controller: LockController, vault: Vault, fileSystem: VaultFileSystem, items: ItemStore, mountpoint: String,
         log: DaemonLog) {
        self.log = log
        self.controller = controller
        self.vault = vault
        self.fileSystem = fileSystem
        self.items = items
        self.mountpoint = mountpoint
    }

    func status(caller: uid_t?) -> StatusReport {
        StatusReport(state: controller.state, graceSecondsLeft: controller.graceSecondsLeft, pid: getpid(),
                     mountpoint: mountpoint, backing: vault.backingPath, passcodeSet: vault.passcodeSet,
                     grace: controller.grace, autolock: controller.autolock, failedAttempts: vault.failedAttempts,
                     retryAfterSeconds: vault.retryAfterSeconds, items: caller.flatMap { items.count(owner: $0) },
                     cipher: vault.contentAEAD.name, passcodeCountedByTPM: vault.passcodeCountedByHardware,
                     tpmLockoutRetryAfterSeconds: vault.hardwareLockoutRetryAfterSeconds)
    }

    /// Every lock and unlock says who asked (docs/SYSTEMD.md, "Who locked it"): the first
    /// question after "why is my vault locked?".
    func lock(_ request: LockRequest, by requester: Requester) throws(ControlFailure) {
        log.info("lock\(request == .normal ? "" : " (\(request.rawValue))") of \(mountpoint) requested by \(requester)",
                 event: .lockRequested)
        controller.lock(request)
    }

    func unlock(passcode: SecureBuffer?, by requester: Requester) throws(ControlFailure) {
        do {
            try controller.unlock(passcode: passcode)
            log.info("\(mountpoint) unlocked by \(requester)" + (passcode == nil ? " (no passcode set)" : " with the passcode"),
                     event: .unlockRequested)
        } catch {
            if case .wrongPasscode(let failed) = error {
                log.warning("wrong passcode for \(mountpoint) from \(requester) (\(failed) failed attempts)", event: .wrongPasscode)
            }
            throw ControlFailure(error.exitCode, error.description)
        }
    }

    func changePasscode(old: SecureBuffer?, new: SecureBuffer?) throws(ControlFailure) {
        do {
            try vault.changePasscode(old: old, new: new)
        } catch {
            throw ControlFailure(error.exitCode, error.description)
        }
        // docs/CONTROL.md: without a passcode, those items go (as on iOS). After the keybag, so
        // none can be added in between; a crash before this leaves them refused, and the next
        // mount deletes them.
        if !vault.passcodeSet { try deletePasscodeBoundItems() }
    }

    /// Deletes every owner's `whenPasscodeSetThisDeviceOnly` items (a vault without a passcode).
    func deletePasscodeBoundItems() throws(ControlFailure) {
        do { try items.deleteAll(requiringPasscode: true) } catch {
            throw ControlFailure(error.exitCode, "the passcode was removed, but its items were not deleted: \(error)")
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

    func item(_ operation: ItemRequest.Operation, owner: uid_t, secret: SecureBuffer?) throws(ControlFailure) -> ControlReplyMessage {
        do throws(ItemError) {
            switch operation {
            case .add(let attributes):
                guard let secret else { throw .invalid("an item needs a secret") }
                try items.add(attributes, owner: owner, secret: secret)
                return ControlReplyMessage(reply: .done)
            case .get(let service, let account):
                let (attributes, secret) = try items.get(ItemIdentity(owner: owner, service: service, account: account))
                return ControlReplyMessage(reply: .item(attributes), secret: secret)
            case .update(let service, let account, let changes, _):
                try items.update(ItemIdentity(owner: owner, service: service, account: account), changes: changes, secret: secret)
                return ControlReplyMessage(reply: .done)
            case .delete(let service, let account):
                try items.delete(ItemIdentity(owner: owner, service: service, account: account))
                return ControlReplyMessage(reply: .done)
            case .list(let service):
                return ControlReplyMessage(reply: .items(try items.list(owner: owner, service: service)))
            case .search(let query) where query.returnsSecrets:
                let matches = try items.searchWithSecrets(owner: owner, query)
                return ControlReplyMessage(reply: .itemsWithSecrets(matches.items, secretLengths: matches.secretLengths),
                                           secret: matches.secrets)
            case .search(let query) where query.reportsLocks:
                let found = try items.searchWithLocks(owner: owner, query)
                return ControlReplyMessage(reply: .itemsWithLocks(found.items, locked: found.locked, state: found.state))
            case .search(let query):
                return ControlReplyMessage(reply: .items(try items.search(owner: owner, query)))
            case .updateMatches(let query, let changes, let rename, _):
                try items.updateMatches(owner: owner, query, changes: changes, rename: rename, secret: secret)
                return ControlReplyMessage(reply: .done)
            case .deleteMatches(let query):
                try items.deleteMatches(owner: owner, query)
                return ControlReplyMessage(reply: .done)
            }
        } catch {
            throw ControlFailure(error.exitCode, error.description)
        }
    }
}
