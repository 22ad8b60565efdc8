import Glibc
import ProtfsControlProtocol
import ProtfsCore
import ProtfsDomain
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// `protfs backup` of the mounted vault, through the daemon (docs/BACKUP.md, "A mounted
/// vault"): the daemon holds the backing directory's lock, so it walks it itself, under the
/// snapshot gate its requests share, into the archive its client created.
extension DaemonControl {
    func backup(into archive: FileDescriptor, passcode: SecureBuffer?, passphrase: SecureBuffer, caller: uid_t,
                progress: @escaping (UInt64, UInt64) -> Bool) throws(ControlFailure) -> BackupItemsLeftOut {
        try checkArchive(archive)
        guard vault.passcodeSet == (passcode != nil) else {
            throw ControlFailure(.usage, vault.passcodeSet ? "this vault has a passcode; a backup needs it"
                                                           : "this vault has no passcode; give none")
        }
        let classKeys: PasscodeClassKeys
        do throws(VaultError) {
            if let passcode { classKeys = try vault.verifyPasscode(passcode) } else { classKeys = try vault.classKeysWithoutPasscode() }
        } catch {
            throw ControlFailure(error.exitCode, error.description)
        }
        // Said at the first entry, not before the passphrase stretch: only the walk holds the
        // namespace, and a stretch takes seconds on a loaded machine.
        var walking = false
        let log = log, backingPath = vault.backingPath
        do throws(BackupError) {
            let backup = try VaultBackup.stream(vault: vault, classKeys: classKeys, into: archive, named: "the archive",
                                                passphrase: passphrase, itemOwner: VaultBackup.itemOwner(asking: caller),
                                                snapshots: fileSystem.snapshots) { (objects, bytes) throws(BackupError) in
                if !walking {
                    walking = true
                    log.info("backup of \(backingPath) started; changes to the namespace wait until it ends")
                }
                guard progress(objects, bytes) else { throw .cancelled }
            }
            log.info("backup of \(vault.backingPath) complete")
            return backup.itemsLeftOut
        } catch {
            log.warning("backup of \(vault.backingPath) failed: \(error)")
            throw ControlFailure(error.exitCode, error.description)
        }
    }

    /// The archive must be a regular file open for writing, and not on this mount: the walk
    /// holds the objects it copies, and a write of the archive through this mount could wait
    /// for the very object the walk holds.
    private func checkArchive(_ archive: FileDescriptor) throws(ControlFailure) {
        let status: stat
        do { status = try archive.status() } catch {
            throw ControlFailure(.failure, "the daemon cannot inspect the archive: \(error)")
        }
        guard status.isRegularFile, fcntl(archive.rawValue, F_GETFL) & O_ACCMODE != O_RDONLY else {
            throw ControlFailure(.usage, "the archive must be a regular file open for writing")
        }
        guard MountTable.device(of: mountpoint) != MountTable.deviceName(status.st_dev) else {
            throw ControlFailure(.usage, "the archive cannot be on \(mountpoint), the mount it backs up; write it elsewhere")
        }
    }
}
