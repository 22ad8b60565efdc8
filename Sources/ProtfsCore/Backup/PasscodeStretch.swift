import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// A restore's new passcode run through Argon2id on a thread of its own while the backup
/// passphrase's runs, under the archive's parameters (the vault's, when protfs made the
/// archive): the other core would idle then. Beside the replay, where it ran before, it
/// took a core from making files, and mapping its memory held up the page faults and heap
/// growth of every other thread of the restore.
final class PasscodeStretch: Sendable {
    let kdf: Argon2idParameters
    private let stretched = BoundedHandoff<Keybag.StretchedPasscode?>(capacity: 1)
    private let thread: JoinableThread

    /// Starts stretching `passcode`; nil when the system has no thread to give (the keybag's
    /// derivation then stretches it itself).
    init?(_ passcode: SecureBuffer, kdf: Argon2idParameters) {
        self.kdf = kdf
        let stretched = stretched
        do {
            thread = try JoinableThread {
                stretched.put(try? Keybag.stretch(passcode, kdf: kdf))
            }
        } catch {
            return nil
        }
    }

    /// The stretched passcode, once it is; nil if stretching failed (the keybag's derivation
    /// tries again and reports why). Called once.
    func wait() -> Keybag.StretchedPasscode? {
        stretched.take() ?? nil
    }

    /// Waits for the thread: no stretching goes on after the restore has returned.
    func join() {
        thread.join()
    }
}
