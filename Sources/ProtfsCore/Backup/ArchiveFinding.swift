import Glibc
import ProtfsSystem

/// An entry of an archive that a restore does not make as the archive says, because its
/// author controls every byte of it (docs/BACKUP.md, "What a restore trusts"). `backup
/// --verify` lists every one; `restore` warns of each entry it leaves out or gives to the
/// restoring user, and counts the set-id bits it clears.
public struct ArchiveFinding: Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        /// Set-user-ID or set-group-ID bits (the mode as archived): made without them.
        case setIDBits(mode: UInt32)
        /// A character or block device: left out.
        case deviceNode(mode: UInt32, device: UInt64)
        /// Under a folder of the daemon's own records, or a name only the daemon writes, but
        /// not what the daemon keeps there (fsck's rule): left out.
        case notARecord
        /// Named as a record of the daemon's folder, but its bytes are not one: left out.
        case recordMalformed
        /// The backing root, owned by another user in the archive: given to the restoring user.
        case rootOwner(uid: UInt32)
        /// One of the daemon's records, owned by another user than the backing root in the
        /// archive: given to the restoring user, as the daemon makes them.
        case recordOwner(uid: UInt32)
    }

    /// Relative to the backing root ("" is the root).
    public let path: String
    public let problem: Problem

    /// Whether a restore leaves the entry out (else it makes it, changed).
    public var isLeftOut: Bool {
        switch problem {
        case .deviceNode, .notARecord, .recordMalformed: true
        case .setIDBits, .rootOwner, .recordOwner: false
        }
    }

    public var description: String {
        // The author chose the path too: escaped, so it cannot write to the terminal.
        let place = path.isEmpty ? "the backing root" : DisplayName.escaped(Array(path.utf8))
        switch problem {
        case .setIDBits(let mode):
            return "\(place): set-user-ID or set-group-ID bits (mode \(String(mode & 0o7777, radix: 8))): a restore clears them"
        case .deviceNode(let mode, let device):
            let type = mode_t(mode) & S_IFMT == S_IFCHR ? "character" : "block"
            return "\(place): a \(type) device node (\(MountTable.deviceName(dev_t(device)))): a restore leaves it out"
        case .notARecord:
            return "\(place): not a record of the daemon's own (fsck's rule for these names): a restore leaves it out"
        case .recordMalformed:
            return "\(place): named as a record but not a well-formed one of this vault: a restore leaves it out"
        case .rootOwner(let uid):
            return "\(place): owned by uid \(uid) in the archive: a restore gives it to whoever runs it"
        case .recordOwner(let uid):
            return "\(place): a record of the daemon's owned by uid \(uid), not the backing root's owner: "
                + "a restore gives it to whoever runs it"
        }
    }
}
