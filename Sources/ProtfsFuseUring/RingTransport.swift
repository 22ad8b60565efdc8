import CFuse
import CProtfsUring
import Dispatch
import Glibc
import ProtfsFuse
import ProtfsLog
import ProtfsSystem
import Synchronization

/// FUSE over io_uring, a `FuseTransport`. `/dev/fuse` always carries INIT, FORGET and
/// INTERRUPT (served by the session's request loop); with `-o io_uring`, and when the kernel
/// offers FUSE over io_uring at INIT (Linux 6.14+, `/sys/module/fuse/parameters/enable_uring` set by root),
/// every other request comes through per-CPU io_uring queues instead, each served by
/// `threadsPerQueue` threads bound to its CPU (`RingServer`).
///
/// The kernel needs a queue per possible CPU before it sends a request through any, and
/// blocks requests meanwhile once INIT agreed on io_uring: so the queues are set up before
/// the INIT reply asks for it (no ring, no asking), and register right after it. libfuse
/// 3.14 knows nothing of this: it still parses each request (`fuse_session_process_buf`)
/// and builds each reply, which the session's custom `writev` hands here; a reply whose
/// `unique` belongs to a ring entry goes back through that entry, anything else (INIT's
/// reply, notifications) to `/dev/fuse`.
public final class RingTransport: FuseTransport, @unchecked Sendable {
    /// Threads per queue: how many of a CPU's requests are handled at once (one stuck in
    /// the backing filesystem holds up no other).
    static let threadsPerQueue = 4
    static let enableSwitch = "/sys/module/fuse/parameters/enable_uring"

    private let session: OpaquePointer
    private let log: DaemonLog
    /// Room for the largest request in each entry's payload buffer.
    private let payloadBytes: Int
    private var servers: [RingServer] = []
    /// Serving queues, set between the INIT reply and `finish`.
    private let serving = Atomic<Bool>(false)
    private let opened = DispatchSemaphore(value: 0)
    private let decided = DispatchSemaphore(value: 0)
    private let goAhead = Atomic<Bool>(false)
    private let failures = Mutex<[Int32]>([])
    private var asked = false
    private let failureReported = Atomic<Bool>(false)
    /// Wakes the /dev/fuse loop to see the session's end; set before serving starts.
    private var sessionEnded: (@Sendable () -> Void)?

    /// The transport of `session` (a `fuse_session`), for `FuseSession`'s `makeTransport`.
    public init(session: OpaquePointer, log: DaemonLog, payloadBytes: Int = FuseSession.maxRequestBytes) {
        self.session = session
        self.log = log
        self.payloadBytes = payloadBytes
    }

    public func whenSessionEnds(_ wake: @escaping @Sendable () -> Void) { sessionEnded = wake }

    // MARK: - INIT

    /// Decides the transport and says so; with io_uring, the INIT reply asks for it.
    public func initRequested(_ request: UnsafeMutableRawBufferPointer) -> UInt32 {
        guard Self.kernelOffers(request) else {
            log.info("transport: /dev/fuse (io_uring not used: \(Self.whyNotOffered))")
            return 0
        }
        let count = Int(protfs_possible_cpus())
        guard count > 0 else {
            log.info("transport: /dev/fuse (io_uring not used: the number of possible CPUs is unknown)")
            return 0
        }
        let device = fuse_session_fd(session)
        for index in 0 ..< count * Self.threadsPerQueue {
            guard let server = RingServer.make(queue: index % count, depth: 1, payloadBytes: payloadBytes,
                                               session: session, device: device) else { break }
            let started = server.start(opened: { [self] status in
                if status != 0 { failures.withLock { $0.append(status) } }
                opened.signal()
            }, go: { [self] in
                decided.wait()
                return goAhead.load(ordering: .acquiring)
            }, ended: { [self] ending in
                ended(ending, queue: index % count)
            })
            guard started else { break }
            servers.append(server)
        }
        for _ in servers { opened.wait() }
        let failure = failures.withLock { $0.first }
        guard servers.count == count * Self.threadsPerQueue, failure == nil else {
            abandon()
            let reason = failure.map { "cannot set up its queues: \(Errno(-$0))" } ?? "out of memory or threads for its queues"
            log.info("transport: /dev/fuse (io_uring not used: \(reason))")
            return 0
        }
        asked = true
        return PROTFS_FUSE_OVER_IO_URING_FLAGS2
    }

    /// INIT is answered: with io_uring agreed, the queues register and serve.
    public func initAnswered() {
        guard asked else { return }
        log.info("transport: io_uring (\(servers.count / Self.threadsPerQueue) queues, one per CPU, of \(Self.threadsPerQueue) threads each)")
        serving.store(true, ordering: .releasing)
        goAhead.store(true, ordering: .releasing)
        for _ in servers { decided.signal() }
    }

    private func abandon() {
        goAhead.store(false, ordering: .releasing)
        for _ in servers { decided.signal() }
        for server in servers { server.join() }
        servers = []
    }

    /// A thread stopped. Refused at registration, the kernel sends requests through
    /// /dev/fuse; failed otherwise, it may wait for that thread's entry forever, so the
    /// session ends rather than hang the mount.
    private func ended(_ ending: RingServer.Ending, queue: Int) {
        switch ending {
        case .ended:
            return
        case .refused(let status):
            guard !failureReported.exchange(true, ordering: .acquiringAndReleasing) else { return }
            log.warning("transport: /dev/fuse (the kernel refused io_uring queue \(queue): \(Errno(-status)))")
        case .failed(let status):
            guard !failureReported.exchange(true, ordering: .acquiringAndReleasing) else { return }
            log.warning("transport: io_uring queue \(queue) failed (\(Errno(-status))); the session ends")
            fuse_session_exit(session)
            sessionEnded?()
        }
    }

    /// Whether the INIT request offers FUSE_OVER_IO_URING.
    static func kernelOffers(_ request: UnsafeMutableRawBufferPointer) -> Bool {
        let header = MemoryLayout<fuse_in_header>.size
        guard request.count >= header + MemoryLayout<fuse_init_in>.size else { return false }
        let initIn = request.loadUnaligned(fromByteOffset: header, as: fuse_init_in.self)
        return initIn.flags & UInt32(FUSE_INIT_EXT) != 0 && initIn.flags2 & PROTFS_FUSE_OVER_IO_URING_FLAGS2 != 0
    }

    static var whyNotOffered: String {
        var state = [UInt8](repeating: 0, count: 4)
        if let opened = try? OwnedDescriptor.open(path: enableSwitch, .readOnly) {
            let file = opened.borrowed
            _ = state.withUnsafeMutableBytes { try? file.read(into: $0, at: 0) }
            if state.first == UInt8(ascii: "N") {
                return "the kernel has it switched off (\(enableSwitch) is N; root can write 1)"
            }
        }
        return "the kernel does not offer it (Linux 6.14 or later with CONFIG_FUSE_IO_URING)"
    }

    // MARK: - Replies

    /// Sends libfuse's reply through the ring entry holding its request: true, or false if
    /// no entry does (the reply goes to /dev/fuse).
    public func reply(_ iov: UnsafePointer<iovec>, _ count: Int) -> Bool {
        guard serving.load(ordering: .acquiring), count >= 1, iov[0].iov_len >= MemoryLayout<fuse_out_header>.size else { return false }
        let unique = iov[0].iov_base!.loadUnaligned(as: fuse_out_header.self).unique
        guard unique != 0 else { return false }
        for server in servers {
            for entry in server.entries where entry.unique.load(ordering: .acquiring) == unique {
                entry.stageReply(iov, count)
                entry.unique.store(0, ordering: .releasing)
                server.replied(entry)
                return true
            }
        }
        return false
    }

    // MARK: - The end

    /// After the unmount: stops the queues (the kernel has ended their commands, or ends
    /// them as the rings close) and releases them.
    public func finish() {
        guard serving.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for server in servers { server.stop() }
        for server in servers { server.join() }
    }
}
