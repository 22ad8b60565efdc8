import Glibc
import ProtfsSystem

/// Descriptors a test opens and closes by hand, as fixtures that keep one across their own
/// `init` and `deinit` do. The sources have no such call: every open there makes an
/// `OwnedDescriptor`, which closes itself.
extension FileDescriptor {
    public static func open(_ name: String, in directory: FileDescriptor, _ flags: OpenFlags,
                            mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        try OwnedDescriptor.open(name, in: directory, flags, mode: mode).release()
    }

    public static func open(path: String, _ flags: OpenFlags, mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        try OwnedDescriptor.open(path: path, flags, mode: mode).release()
    }

    public func close() { _ = Glibc.close(rawValue) }
}
