import ProtfsSystem

/// What reading, decoding, opening and writing a keybag can find (docs/FORMAT.md): the
/// codec's own failures, in its own terms. The vault turns each into the `VaultError` that
/// says what to do about it. No case carries a secret.
public enum KeybagError: Error, Sendable, Equatable {
    /// The bytes are not a keybag this version accepts: the reason says which check failed.
    case damaged(reason: String)
    case newerVersion(UInt16)
    /// The MAC under the device key does not verify, though the rest looks like a keybag.
    case deviceKeyMismatch
    /// Argon2id could not run.
    case passcodeHashFailed
    /// A passcode given to a keybag without one.
    case noPasscodeSet
    /// No passcode given to a keybag that has one.
    case passcodeRequired
    /// There is no keybag in the backing directory at `path`.
    case missing(path: String)
    /// The backing directory at `path` holds what a restore that did not end made.
    case restoreInterrupted(path: String)
    /// The hardware that counts passcode guesses could not seal the passcode secret.
    case passcodeSealFailed(reason: String)
    case system(operation: String, path: String, errno: Errno)
}
