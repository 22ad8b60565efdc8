import Glibc
import ProtfsCommandLine
import ProtfsCore

/// The one time a recovery key is shown (docs/OPERATIONS.md, "The TPM"): on standard output
/// straight from locked memory, the advice on standard error.
enum RecoveryKeyOutput {
    static func show(_ recovery: RecoveryKey) {
        writeError("protfs init: the recovery key below stands in for this TPM (protfs device-key BACKING --to file "
                   + "--recovery-key-file FILE). It is shown once and never stored: write it down and keep it offline. "
                   + "Whoever holds it and the disk can guess the passcode offline, as without a TPM.\n")
        // `print`'s buffered lines first, so the key follows them.
        fflush(nil)
        let text = recovery.text
        defer { text.wipe() }
        text.withUnsafeBytes { _ = writeOutput($0) }
        writeOutput("\n")
    }
}
