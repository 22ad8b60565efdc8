import ProtfsDomain
import ProtfsCrypto
import ProtfsSystem

extension ControlClient {
    /// Asks the daemon to write a backup of its vault into `archive` (a new, empty regular
    /// file the caller created and owns; docs/BACKUP.md): `passcode` (nil for a vault without
    /// one) and `passphrase` travel as secrets, the archive as a descriptor. `progress` gets
    /// the objects and file bytes so far now and then. Returns the items left out. Closing the connection (the caller dies) stops the daemon's walk.
    public func backup(into archive: FileDescriptor, passcode: SecureBuffer?, passphrase: SecureBuffer,
                       progress: (_ objects: UInt64, _ bytes: UInt64) -> Void) throws(ControlFailure) -> BackupItemsLeftOut {
        let socket = try connect()
        try write(.backup(passcode: passcode != nil), secrets: (passcode.map { [$0] } ?? []) + [passphrase], to: socket)
        do { try socket.sendDescriptor(archive.rawValue) } catch {
            // A daemon that refuses the request (another uid, a wrong passcode) answers and
            // closes before it takes the archive: its answer says why, the broken pipe does not.
            let answer = try? socket.reading(until: Deadline(after: .seconds(1))) { source throws(ControlFailure) in
                try readReply(from: &source)
            }
            if case .failure(let failure)? = answer { throw failure }
            throw ControlFailure(.failure, "cannot pass the archive to the protfs daemon of \(mountpoint): \(error)")
        }
        // No deadline: a backup takes as long as the vault needs.
        return try socket.reading(until: nil) { source throws(ControlFailure) in
            while let reply = try readReply(from: &source) {
                switch reply {
                case .failure(let failure): throw failure
                case .backupProgress(let objects, let bytes): progress(objects, bytes)
                case .backedUp(let leftOut): return leftOut
                default: throw unexpected(reply)
                }
            }
            throw ControlFailure(.failure, "the protfs daemon of \(mountpoint) closed the connection before the backup was "
                                 + "complete; see its log")
        }
    }
}
