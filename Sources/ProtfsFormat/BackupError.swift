import ProtfsDomain
import ProtfsSystem

/// What can go wrong with a backup or a restore; each says what to do and maps to its exit code.
public enum BackupError: CommandError, Equatable {
    case notAnArchive
    case newerVersion(UInt16)
    case wrongPassphrase
    case damaged(String)
    case passphraseHashFailed
    case archiveExists(path: String)
    case destinationNotEmpty(path: String)
    /// `path` holds an interrupted restore of another archive (`RestoreMarker`).
    case interruptedRestoreOfAnotherArchive(path: String)
    case unsupportedObject(path: String)
    case objectDamaged(path: String)
    /// An object's extended attributes are past what a restore reads (`ExtendedAttributeBounds`).
    case extendedAttributesTooLarge(path: String)
    /// The wrong-passphrase delays refused the attempt (or their record could not be kept):
    /// the vault's error told of a backup passphrase, with its exit code.
    case attemptRefused(exitCode: ExitCode, reason: String)
    /// The client of a backup through the daemon went away: the walk stopped.
    case cancelled
    case system(operation: String, path: String, errno: Errno)

    public var exitCode: ExitCode {
        switch self {
        case .wrongPassphrase: .wrongPasscode
        case .damaged, .notAnArchive, .objectDamaged: .damage
        case .archiveExists: .alreadyExists
        case .attemptRefused(let exitCode, _): exitCode
        default: .failure
        }
    }

    public var description: String {
        switch self {
        case .notAnArchive: "not a protfs backup archive"
        case .newerVersion(let version): "the archive has format version \(version), made by a newer protfs; upgrade protfs"
        case .wrongPassphrase: "wrong backup passphrase (or a damaged archive header); nothing was restored"
        case .damaged(let reason): "the archive is damaged or was changed: \(reason); nothing was restored"
        case .passphraseHashFailed: "Argon2id could not run (not enough memory for its parameters?)"
        case .archiveExists(let path): "\(path) exists; choose another archive name"
        case .destinationNotEmpty(let path): "\(path) is not empty; restore into an empty or missing directory"
        case .interruptedRestoreOfAnotherArchive(let path):
            "\(path) holds an interrupted restore of another archive; rerun that restore, or restore this one elsewhere"
        case .unsupportedObject(let path): "\(path) in the backing directory is neither a file, directory, symlink nor node"
        case .objectDamaged(let path): "\(path) in the backing directory fails authentication; run 'protfs fsck' first"
        case .extendedAttributesTooLarge(let path):
            "\(path) in the backing directory has more than 16 MiB of extended attributes, more than a restore reads"
        case .attemptRefused(_, let reason): reason
        case .cancelled: "the backup was cancelled: its client went away"
        case .system(let operation, let path, let errno): "cannot \(operation) \(path): \(errno)"
        }
    }
}
