import Glibc

/// The one owner of an open descriptor: it cannot be copied, so exactly one value closes it,
/// when that value goes (at the end of the scope that holds it, or with the object that
/// stores it). Everything else works on `borrowed`, a `FileDescriptor` that has no `close`,
/// valid while its owner lives. A leak or a double close is then a type error, not a review
/// finding. The close's result is not reported: every write here that must last is synced
/// first, and the sync is where the kernel reports a failed write.
public struct OwnedDescriptor: ~Copyable, Sendable {
    /// The descriptor for calls that use it without owning it. Borrow it from a named owner
    /// or inside `closeAfter`: an owner that is only a temporary (`open(...).borrowed`) is
    /// gone, and its descriptor closed, before the call that uses the view runs.
    public let borrowed: FileDescriptor

    /// Takes ownership of a descriptor the kernel or a C library handed over (an accepted
    /// socket, a received descriptor, `O_TMPFILE`).
    public init(adopting descriptor: FileDescriptor) { borrowed = descriptor }

    deinit { _ = Glibc.close(borrowed.rawValue) }

    /// Hands the descriptor to a new owner outside Swift (a C library that closes it).
    public consuming func release() -> FileDescriptor {
        let descriptor = borrowed
        discard self
        return descriptor
    }

    /// Runs `body` with the descriptor and closes it after, thrown or not: a scope that owns
    /// a descriptor only for one use.
    public consuming func closeAfter<Result: ~Copyable, Failure: Error>(
        _ body: (FileDescriptor) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(borrowed)
    }

    /// `openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`.
    public static func open(_ name: String, in dir: FileDescriptor, _ flags: FileDescriptor.OpenFlags,
                            mode: mode_t = 0o600) throws(Errno) -> OwnedDescriptor {
        let all = flags.union([.noFollow, .closeOnExec]).rawValue
        return OwnedDescriptor(adopting: FileDescriptor(rawValue: try syscallRetrying { Glibc.openat(dir.rawValue, name, all, mode) }))
    }

    /// Opens an absolute or cwd-relative path given by a user on the command line (not by
    /// the kernel), following symlinks as a shell would.
    public static func open(path: String, _ flags: FileDescriptor.OpenFlags, mode: mode_t = 0o600) throws(Errno) -> OwnedDescriptor {
        let all = flags.union(.closeOnExec).rawValue
        return OwnedDescriptor(adopting: FileDescriptor(rawValue: try syscallRetrying { Glibc.open(path, all, mode) }))
    }
}

extension Optional where Wrapped == OwnedDescriptor {
    /// The descriptor of an owner that may be absent, borrowed without taking it.
    public var borrowed: FileDescriptor? {
        switch self {
        case .some(let owner): owner.borrowed
        case .none: nil
        }
    }
}
