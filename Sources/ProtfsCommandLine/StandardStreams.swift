import Glibc
import ProtfsSystem

/// Messages go to stderr with `write(2)`: the C `stderr` global is mutable state Swift 6
/// rejects, and a message must not be lost to buffering when a command exits.
public func writeError(_ message: String) {
    writeFully(STDERR_FILENO, message)
}

/// Output that must reach a pipe at once (`protfsctl watch`), unbuffered. False when
/// standard output is gone.
@discardableResult
public func writeOutput(_ text: String) -> Bool {
    writeFully(STDOUT_FILENO, text)
}

/// Raw bytes to standard output (an item's secret, straight from locked memory).
@discardableResult
public func writeOutput(_ bytes: UnsafeRawBufferPointer) -> Bool {
    writeFully(STDOUT_FILENO, bytes)
}

@discardableResult
private func writeFully(_ fd: Int32, _ text: String) -> Bool {
    Array(text.utf8).withUnsafeBytes { writeFully(fd, $0) }
}

private func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
    var done = 0
    while done < buffer.count {
        guard let n = try? syscallRetrying({ Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) })
        else { return false }
        done += n
    }
    return true
}
