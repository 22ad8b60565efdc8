import Glibc
import ProtfsSystem
import ProtfsTestSupport

/// A temporary directory of a test's own (removed with what it holds when it goes) and a
/// descriptor of it for the `*at` calls.
final class ScratchDirectory {
    private let temporary = TemporaryDirectory()
    private let descriptor: OwnedDescriptor

    init() throws { descriptor = try OwnedDescriptor.open(path: temporary.path, [.readOnly, .directory]) }

    var fd: FileDescriptor { descriptor.borrowed }
}

/// The file a descriptor number names now, to tell whether it still names the same one
/// (the tests run in parallel: a closed number may be reused at once by another test).
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init?(_ rawDescriptor: Int32) {
        var st = stat()
        guard fstat(rawDescriptor, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}

/// A pipe's two ends (read, write), close-on-exec, for the caller to own.
func pipeEnds() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw Errno.current }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
}
