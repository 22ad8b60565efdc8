import CFuse
import Glibc
import ProtfsSystem

/// How the kernel mount is made.
public struct MountConfiguration: Sendable {
    public var backing: String
    public var mountpoint: String
    public var foreground = false
    public var allowOther = false
    public var readOnly = false
    public var debugRequests = false
    /// libfuse's own options, passed through.
    public var fuseOptions: [String] = []
    public var maxThreads = 16

    public init(backing: String, mountpoint: String) {
        self.backing = backing
        self.mountpoint = mountpoint
    }

    /// The `-o` string for libfuse: `fsname=BACKING` and `subtype=protfs` so /proc/mounts
    /// shows `BACKING MNT fuse.protfs`; kernel permission checks. Never `auto_unmount`: a
    /// daemon that dies leaves its mount in place, answering `ENOTCONN`, so that nothing
    /// written there after the death lands in plaintext in the directory underneath (an
    /// OOM kill did that); the next `protfs mount` clears the dead mount.
    var optionString: String {
        let escapedBacking = backing.replacing("\\", with: "\\\\").replacing(",", with: "\\,")
        var options = ["fsname=\(escapedBacking)", "subtype=protfs", "default_permissions"]
        if allowOther { options.append("allow_other") }
        if readOnly { options.append("ro") }
        if debugRequests { options.append("debug") }
        return (options + fuseOptions).joined(separator: ",")
    }
}

public enum FuseSessionError: Error, CustomStringConvertible {
    case badOptions
    case mountFailed(String)

    public var description: String {
        switch self {
        case .badOptions: "libfuse refused the mount options"
        case .mountFailed(let mountpoint): "could not mount on \(mountpoint)"
        }
    }
}

/// One mounted session: create, mount, (daemonize), serve on several threads, unmount.
public final class FuseSession {
    private let session: OpaquePointer
    private let adapter: Unmanaged<FuseAdapter>
    private let mountpoint: String
    /// Decides at INIT whether requests come through another transport; serves them if so.
    private let transport: TransportChoice

    /// The largest request: `max_write` of data (a transport's buffers hold one).
    public static let maxRequestBytes = LowLevelOperations.maxRequestBytes

    /// `makeTransport`: a transport besides `/dev/fuse` to try at INIT (`-o io_uring`), if any.
    public init(adapter: FuseAdapter, configuration: MountConfiguration,
                makeTransport: MakeFuseTransport? = nil) throws(FuseSessionError) {
        // libfuse copies the table; the adapter stays retained for the session's life.
        var operations = LowLevelOperations.make()
        let retained = Unmanaged.passRetained(adapter)
        let arguments = ["protfs", "-o", configuration.optionString]
        var cArguments = arguments.map { strdup($0) }
        defer { cArguments.forEach { free($0) } }
        let created: OpaquePointer? = cArguments.withUnsafeMutableBufferPointer { argv in
            var args = fuse_args(argc: Int32(argv.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }
            return fuse_session_new(&args, &operations, MemoryLayout<fuse_lowlevel_ops>.size, retained.toOpaque())
        }
        guard let created else {
            retained.release()
            throw .badOptions
        }
        self.adapter = retained
        mountpoint = configuration.mountpoint
        session = created
        transport = TransportChoice(makeTransport?(created, adapter.log), adapter: adapter)
        // The kernel has already taken the caller's umask off the mode of every create,
        // mknod and mkdir it sends (no FUSE_CAP_DONT_MASK): the daemon's own must not take
        // more. Everything else the daemon creates names its mode (0600, 0700) or sets it.
        umask(0)
        // Thrown from here on, the session is whole: `deinit` destroys it and releases the
        // adapter (doing so here too freed them twice).
        guard fuse_session_mount(session, configuration.mountpoint) == 0 else { throw .mountFailed(configuration.mountpoint) }
        guard InitReplyExtension.install(on: session) else {
            fuse_session_unmount(session)
            throw .mountFailed(configuration.mountpoint)
        }
        adapter.sessionAddress.store(UInt(bitPattern: created), ordering: .releasing)
        Self.widenReadahead(of: configuration.mountpoint)
    }

    /// The kernel reads ahead at most `read_ahead_kb` of the mount's backing device info, 128
    /// KiB by default whatever `max_readahead` the daemon asks for: a sequential reader then
    /// costs eight requests (and eight hand-offs of 32 chunks to the cores) per MiB, and
    /// never has a request waiting on the disk while another is decrypted. A root daemon
    /// raises it for its own mount to `readaheadBytes`; anyone else keeps the default.
    static func widenReadahead(of mountpoint: String) {
        guard geteuid() == 0, let device = MountTable.device(of: mountpoint),
              let opened = try? OwnedDescriptor.open(path: "/sys/class/bdi/\(device)/read_ahead_kb", .writeOnly)
        else { return }
        let file = opened.borrowed
        let value = Array("\(LowLevelOperations.readaheadBytes >> 10)\n".utf8)
        _ = value.withUnsafeBytes { try? file.write($0, at: 0) }
    }

    /// The raw session, for kernel cache invalidation (`fuse_lowlevel_notify_inval_inode`).
    public var rawSession: OpaquePointer { session }

    /// Unmounts a session that will not be served.
    public func unmount() { fuse_session_unmount(session) }

    /// Serves requests until unmounted or told to stop (SIGTERM, SIGINT, SIGHUP), then
    /// unmounts. Returns 0, or the negative errno that ended the loop. With `latency`, idle
    /// CPUs are kept polling while requests stream in (`PollingHold`).
    public func serve(maxThreads: Int, latency: CPULatencyRequest? = nil) -> Int32 {
        let address = UInt(bitPattern: session)
        let loop = RequestLoop(session: session, maxWorkers: maxThreads, latency: latency, transport: transport)
        // The io_uring queues serve on through the unmount, which ends their commands (the
        // kernel waits for that before the unmount completes), then stop.
        defer {
            fuse_session_unmount(session)
            transport.finish()
        }
        do {
            try TerminationSignals.watch {
                fuse_session_exit(OpaquePointer(bitPattern: address))
                loop.wake()
            }
        } catch {
            return -error.rawValue
        }
        transport.whenSessionEnds { loop.wake() }
        return loop.run()
    }

    deinit {
        adapter.takeUnretainedValue().sessionAddress.store(0, ordering: .releasing)
        fuse_session_destroy(session)
        adapter.release()
    }
}
