import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

/// `protfs backup BACKING ARCHIVE` of a mounted vault: the daemon holds the backing
/// directory, so it writes the archive (docs/BACKUP.md, "A mounted vault"), into a file this
/// command creates; the passcode and the passphrase go to it as secrets over the control socket.
enum MountedBackup {
    static func run(backing: String, mountpoint: String, archive: String, passcodes: PasscodeReader,
                    passphrases: PasscodeReader, progress: ProgressMeter) throws {
        let client = try ControlClient(mountpoint: mountpoint)
        if let place = CanonicalPath.resolvingParent(archive),
           let root = [backing, mountpoint].first(where: { place == $0 || place.hasPrefix($0 + "/") }) {
            throw UsageError("the archive cannot be inside \(root), which it backs up; write it elsewhere")
        }
        guard case .status(let status) = try client.send(.status) else {
            throw ControlFailure(.failure, "the protfs daemon of \(mountpoint) did not answer with its status")
        }
        let passcode = status.passcodeSet ? try passcodes.read() : nil
        let passphrase = try passphrases.readNew(prompt: "Backup passphrase: ", confirmation: "Repeat the backup passphrase: ")
        let pending = try PendingArchive.create(at: archive)
        let leftOut = try client.backup(into: pending.file, passcode: passcode, passphrase: passphrase,
                                        progress: progress.update)
        progress.finish()
        try pending.publish()
        print("Backed up \(backing) (mounted on \(mountpoint)) to \(archive)" + leftOut.sentenceEnd)
    }
}
