import Glibc
import ProtfsSystem

/// Messages go to stderr with `write(2)`: the C `stderr` global is mutable state Swift 6
/// rejects, and a message must not be lost to buffering when a command exits.
public func writeError(_ message: String) {
    let bytes = Array(message.utf8)
    bytes.withUnsafeBytes { buffer in
        var done = 0
        while done < buffer.count {
            guard let n = try? syscallRetrying({ Glibc.write(STDERR_FILENO, buffer.baseAddress! + done, buffer.count - done) })
            else { return }
            done += n
        }
    }
}
