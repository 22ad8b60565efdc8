import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Vault-level failures: opening, initialising, unlocking, changing the passcode. Each says
/// what failed and what to do, and maps to its exit code. No case carries a secret: paths,
/// counts, versions and errno values only.
public enum VaultError: CommandError, Sendable, Equatable {
    // Device key.
    case deviceKeyMissing(path: String)
    case deviceKeyInsecure(path: String, mode: UInt32)
    case deviceKeyWrongSize(path: String, size: Int)
    case deviceKeyNotRegularFile(path: String)
    case deviceKeyMismatch
    /// The hardware holding a sealed device key refused or failed (its words in `reason`).
    case deviceKeySealFailed(path: String, reason: String)
    /// The TPM could not seal or unseal a vault's passcode secret (its words in `reason`).
    case passcodeSealFailed(reason: String)
    /// `protfs device-key` on a key file other vaults use too.
    case deviceKeyShared(path: String, vaults: Int)
    /// `--tpm2` with a key file that holds a plain key.
    case deviceKeyNotSealed(path: String)
    /// A recovery key that is malformed, or that does not open the vault's recovery seal.
    case recoveryKeyRefused(reason: String)
    // Backing directory.
    case backingMissing(path: String)
    case notAVault(path: String)
    case restoreInterrupted(path: String)
    case alreadyInitialized(path: String)
    case backingNotEmpty(path: String)
    case extendedAttributesUnsupported(path: String)
    case backingBusy(path: String, waitedSeconds: Int)
    // Keybag and metadata.
    case keybagDamaged(reason: String)
    case keybagFromNewerVersion(version: UInt16)
    case keybagRollback(found: UInt64, recorded: UInt64)
    case keybagWeakParameters(opsLimit: UInt64, memLimit: UInt64)
    case rootMetadataDamaged
    case stateDamaged(path: String)
    case stateMissing(path: String)
    // Passcodes.
    case wrongPasscode(failedAttempts: Int)
    case rateLimited(retryAfterSeconds: Int)
    /// The TPM counting passcode guesses refuses every attempt for now (nil: it did not say
    /// for how long).
    case passcodeLockout(retryAfterSeconds: Int?)
    case passcodeHashFailed
    /// A passcode operation on a vault without one (docs/BACKUP.md).
    case noPasscodeSet
    /// An operation for vaults without a passcode on one that has a passcode.
    case passcodeRequired
    // Anything else the system refused.
    case system(operation: String, path: String, errno: Errno)

    /// What a keybag failure means for the vault.
    public init(_ error: KeybagError) {
        switch error {
        case .damaged(let reason): self = .keybagDamaged(reason: reason)
        case .newerVersion(let version): self = .keybagFromNewerVersion(version: version)
        case .deviceKeyMismatch: self = .deviceKeyMismatch
        case .passcodeHashFailed: self = .passcodeHashFailed
        case .noPasscodeSet: self = .noPasscodeSet
        case .passcodeRequired: self = .passcodeRequired
        case .missing(let path): self = .notAVault(path: path)
        case .restoreInterrupted(let path): self = .restoreInterrupted(path: path)
        case .passcodeSealFailed(let reason): self = .passcodeSealFailed(reason: reason)
        case .system(let operation, let path, let errno): self = .system(operation: operation, path: path, errno: errno)
        }
    }

    /// Runs a keybag operation, its failure told as the vault's.
    static func keybag<R>(_ operation: () throws(KeybagError) -> R) throws(VaultError) -> R {
        do { return try operation() } catch { throw VaultError(error) }
    }

    public var exitCode: ExitCode {
        switch self {
        case .wrongPasscode: .wrongPasscode
        case .rateLimited, .passcodeLockout: .rateLimited
        case .deviceKeyMissing, .backingMissing, .notAVault: .notFound
        case .alreadyInitialized: .alreadyExists
        case .keybagDamaged, .rootMetadataDamaged: .damage
        case .noPasscodeSet, .passcodeRequired: .usage
        default: .failure
        }
    }

    public var description: String {
        switch self {
        case .deviceKeyMissing(let path):
            "device key not found at \(path); pass the vault's key with --device-key PATH (-o device_key=PATH)"
        case .deviceKeyInsecure(let path, let mode):
            "device key \(path) is accessible by group or others (mode \(String(mode & 0o7777, radix: 8))); "
                + "run 'chmod 600 \(path)' and consider the key exposed"
        case .deviceKeyWrongSize(let path, let size):
            "device key \(path) has \(size) bytes, expected 32; it is not a protfs device key"
        case .deviceKeyNotRegularFile(let path):
            "device key \(path) is not a regular file"
        case .deviceKeySealFailed(let path, let reason):
            "sealed device key \(path): \(reason)"
        case .recoveryKeyRefused(let reason):
            "recovery key refused: \(reason); nothing was changed"
        case .passcodeSealFailed(let reason):
            "the TPM that counts this vault's passcodes failed: \(reason)"
        case .deviceKeyShared(let path, let vaults):
            "device key \(path) is the key of \(vaults) other vault\(vaults == 1 ? "" : "s") too (their records are beside it): "
                + "replacing it would lose them; move this vault with a key file of its own (a backup restored under a new "
                + "--device-key)"
        case .deviceKeyNotSealed(let path):
            "device key \(path) holds a plain key, not one sealed by the TPM; choose a new --device-key path for "
                + "--tpm2, or move a vault to the TPM with 'protfs device-key BACKING --device-key \(path) --to tpm2'"
        case .deviceKeyMismatch:
            "device key does not match this vault; pass the key the vault was created with (--device-key PATH)"
        case .backingMissing(let path):
            "backing directory \(path) does not exist"
        case .notAVault(let path):
            "\(path) is not a protfs vault (no protfs.keybag); create one with 'protfs init \(path)'"
        case .restoreInterrupted(let path):
            "\(path) holds a restore that did not end (protfs.restoring); run the same 'protfs restore ARCHIVE \(path)' "
                + "again, which clears it and restores from the start"
        case .alreadyInitialized(let path):
            "\(path) is already a protfs vault; mount it, or choose another directory"
        case .backingNotEmpty(let path):
            "\(path) is not empty; 'protfs init' needs an empty or missing directory"
        case .extendedAttributesUnsupported(let path):
            "the filesystem of \(path) does not support user.* extended attributes; "
                + "put the backing directory on ext4, xfs, btrfs or tmpfs (or mount with user_xattr)"
        case .backingBusy(let path, let waited):
            "\(path) is in use by another protfs process (waited \(waited) s for its lock); "
                + "unmount it or wait for that process to finish"
        case .keybagDamaged(let reason):
            "keybag is damaged: \(reason); restore protfs.keybag from a backup"
        case .keybagFromNewerVersion(let version):
            "keybag format version \(version) was made by a newer protfs; upgrade protfs to open this vault"
        case .keybagRollback(let found, let recorded):
            "keybag generation \(found) is older than the recorded generation \(recorded): an older keybag was "
                + "copied back (rollback) and is refused; restore the current protfs.keybag"
        case .keybagWeakParameters(let ops, let mem):
            "keybag asks for Argon2id parameters below the minimum (ops \(ops), \(mem >> 20) MiB; minimum "
                + "ops \(Argon2idParameters.minimum.opsLimit), \(Argon2idParameters.minimum.memLimit >> 20) MiB): refused as tampering"
        case .rootMetadataDamaged:
            "the root directory's metadata (protfs.dir) is damaged; run 'protfs fsck' on the backing directory"
        case .stateDamaged(let path):
            "vault state file \(path) is unreadable or damaged; restore it from a backup, or remove it and run "
                + "'protfs fsck --repair BACKING' to make a new one"
        case .stateMissing(let path):
            "the wrong-passcode record \(path) of this vault is missing (deleted, or the device key was moved without "
                + "it), so passcodes are refused: restore it from a backup, or run 'protfs fsck --repair BACKING' (unmounted) "
                + "to make a new one"
        case .wrongPasscode(let failed):
            "wrong passcode (\(failed) failed attempt\(failed == 1 ? "" : "s") in a row" + {
                let delay = WrongPasscodeDelays.delay(afterFailures: failed)
                if delay > .zero { return "; the next attempt is accepted in \(delay.secondsRoundedUp) s)" }
                return failed == WrongPasscodeDelays.firstDelayedFailure - 1 ? "; the next failure starts a delay)" : ")"
            }()
        case .rateLimited(let seconds):
            "too many wrong passcodes: retry in \(seconds) s"
        case .passcodeLockout(let seconds):
            "the TPM is in dictionary-attack lockout after too many wrong passcodes and refuses every attempt, the "
                + "right passcode included; " + (seconds.map { "the next attempt can be made in at most \($0) s" }
                    ?? "the next attempt can be made once the TPM's lockout interval has passed")
        case .passcodeHashFailed:
            "Argon2id could not run (not enough memory for its parameters?)"
        case .noPasscodeSet:
            "this vault has no passcode: it opens with the device key alone; set one with 'protfsctl passwd MOUNTPOINT'"
        case .passcodeRequired:
            "this vault has a passcode; give it (or remove it first with 'protfsctl passwd --remove MOUNTPOINT')"
        case .system(let operation, let path, let errno):
            "cannot \(operation) \(path): \(errno)"
        }
    }
}
