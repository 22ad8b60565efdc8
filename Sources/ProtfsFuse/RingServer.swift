import CFuse
import CProtfsUring
import Glibc
import ProtfsSystem
import Synchronization

/// One of the threads serving one of the kernel's per-CPU request queues (FUSE over
/// io_uring), bound to that CPU, with an io_uring and ring entries of its own.
///
/// The kernel puts a request on the queue of the CPU its caller runs on, so a thread is
/// woken on the caller's own CPU, where the caller is about to wait for the answer: no
/// other CPU is woken per request, and no CPU has to poll to be quick. The thread handles
/// each request itself; large READ and WRITE requests still spread their crypto over every
/// core (`ChunkParallelism`).
///
/// Each thread has one entry: the kernel hands a request to an entry through the thread
/// that last committed it, so an entry of a thread stuck in a request (a write to a frozen
/// backing filesystem) would hold up the request given to it. With one entry, a busy
/// thread's entry is never free; the queue's other threads serve on.
///
/// The ring is the thread's alone (IORING_SETUP_SINGLE_ISSUER and DEFER_TASKRUN): the
/// kernel writes requests into the entries only while this thread is in `io_uring_enter`,
/// which is what makes it safe to wipe a reply the kernel has taken between two calls. A
/// reply sent from another thread is handed over and the thread woken through `wakeup`.
final class RingServer: @unchecked Sendable {
    /// The completion of the poll on `wakeup` (entries use their index).
    static let wakeupTag = UInt64.max
    /// How long a reply with plaintext the kernel has taken stays in its entry at most, when
    /// no request follows (one that does overwrites it at once): long enough for a caller's
    /// next request to come within one call into the ring, short enough to leave nothing
    /// behind. Other replies (attributes, errors) wait for the next request: a timed wait
    /// made a stream of lookups an eighth slower.
    static let replyLinger = Duration.milliseconds(1)

    /// The kernel's queue this thread serves, which is also the CPU it runs on.
    let queue: Int
    let entries: [RingEntry]
    private let session: OpaquePointer
    private let device: Int32
    private var ring = protfs_ring()
    /// Readable when another thread handed over a reply, or the queue is to stop.
    private let wakeupEventfd: OwnedDescriptor
    private var wakeup: Int32 { wakeupEventfd.borrowed.rawValue }
    private let handedOver = Mutex<[RingEntry]>([])
    private let stopping = Atomic<Bool>(false)
    private var thread: JoinableThread?
    /// Entries committed at the last call into the ring, whose replies the kernel has
    /// taken by the time the call returns.
    private var committed: [RingEntry] = []
    /// Set once the thread runs; read by `RingTransport`.
    let servingThread = Atomic<UInt>(0)

    private init(queue: Int, session: OpaquePointer, device: Int32, entries: [RingEntry], wakeup: consuming OwnedDescriptor) {
        self.queue = queue
        self.session = session
        self.device = device
        self.entries = entries
        wakeupEventfd = wakeup
    }

    /// The thread's memory and wakeup descriptor; nil when out of memory or descriptors.
    static func make(queue: Int, depth: Int, payloadBytes: Int, session: OpaquePointer, device: Int32) -> RingServer? {
        var entries: [RingEntry] = []
        for entry in 0 ..< depth {
            guard let made = RingEntry(index: entry, payloadBytes: payloadBytes) else { return nil }
            entries.append(made)
        }
        let wakeup = protfs_eventfd()
        guard wakeup >= 0 else { return nil }
        return RingServer(queue: queue, session: session, device: device, entries: entries,
                          wakeup: OwnedDescriptor(adopting: FileDescriptor(rawValue: wakeup)))
    }

    /// Opens the ring on the calling thread, which serves it from then on; 0 or a negative errno.
    func open() -> Int32 {
        ThreadPinning.pin(toCPU: queue)
        servingThread.store(pthread_self(), ordering: .releasing)
        // Every entry has one command in the kernel at a time, plus the wakeup poll.
        return protfs_ring_open(&ring, UInt32(entries.count + 1), device)
    }

    /// Whether the calling thread is this one.
    var isServingThread: Bool { pthread_equal(servingThread.load(ordering: .acquiring), pthread_self()) != 0 }

    /// How serving ended.
    enum Ending: Equatable {
        /// Unmounted, aborted, or told to stop.
        case ended
        /// The kernel refused to register an entry (errno): it then sends its requests
        /// through /dev/fuse.
        case refused(Int32)
        /// The ring failed (errno), or the kernel refused a reply: the kernel may be left
        /// waiting for this thread's entry.
        case failed(Int32)
    }

    /// Registers every entry with the kernel and serves until every entry has ended or
    /// `stop` is called.
    func serve() -> Ending {
        defer { protfs_ring_close(&ring) }
        for entry in entries {
            guard protfs_ring_queue_register(&ring, UInt16(queue), entry.buffers, UInt64(entry.index)) == 0 else { return .failed(-EBUSY) }
        }
        guard protfs_ring_queue_poll(&ring, wakeup, Self.wakeupTag) == 0 else { return .failed(-EBUSY) }
        var ending = Ending.ended
        var failure: Int32 = 0
        while !stopping.load(ordering: .acquiring), entries.contains(where: { !$0.ended }) {
            // Replies just committed are taken by the kernel as they are submitted. Those
            // whose entry got no new request are wiped once another completion came, or
            // `replyLinger` passed without one (when one holds plaintext); then the thread sleeps.
            let linger = committed.contains { $0.holdsPlaintextReply } ? Self.replyLinger : nil
            var completions = take(within: linger, failure: &failure)
            for entry in committed where !completions.contains(where: { $0.tag == UInt64(entry.index) }) { entry.wipeReply() }
            committed = []
            if completions.isEmpty, failure == 0 { completions = take(within: nil, failure: &failure) }
            if failure != 0 { break }
            for completion in completions {
                if completion.tag == Self.wakeupTag {
                    wokenUp()
                    continue
                }
                let entry = entries[Int(completion.tag)]
                switch completion.result {
                case 0:
                    entry.registered = true
                    handle(entry)
                case -EAGAIN, -EINTR:
                    // Not taken: the same command again.
                    if entry.registered {
                        _ = protfs_ring_queue_commit(&ring, UInt16(queue), entry.commitID, UInt64(entry.index))
                    } else {
                        _ = protfs_ring_queue_register(&ring, UInt16(queue), entry.buffers, UInt64(entry.index))
                    }
                default:
                    // -ENOTCONN, -ECONNABORTED, -ECANCELED: unmounted or aborted. Anything
                    // else is the transport's to report.
                    entry.ended = true
                    if ending == .ended, ![-ENOTCONN, -ECONNABORTED, -ECANCELED, -ENODEV].contains(completion.result) {
                        ending = entry.registered ? .failed(completion.result) : .refused(completion.result)
                    }
                }
            }
        }
        for entry in entries { entry.wipeReply() }
        return failure != 0 ? .failed(failure) : ending
    }

    /// Submits what was queued, waits for a completion (at most `time`) and takes them all;
    /// an error of the ring itself goes to `failure`.
    private func take(within time: Duration?, failure: inout Int32) -> [(tag: UInt64, result: Int32)] {
        let entered = protfs_ring_enter(&ring, 1, time.map { Int64($0.wholeNanoseconds) } ?? -1)
        if entered < 0, entered != -EINTR, entered != -ETIME { failure = entered }
        var completions: [(tag: UInt64, result: Int32)] = []
        var tag: UInt64 = 0
        var result: Int32 = 0
        while protfs_ring_take_completion(&ring, &tag, &result) != 0 { completions.append((tag, result)) }
        return completions
    }

    /// Asks the thread to stop at its next wakeup.
    func stop() {
        stopping.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }

    private func handle(_ entry: RingEntry) {
        guard let request = entry.takeRequest() else {
            let unique = UnsafeRawPointer(entry.header).loadUnaligned(as: fuse_in_header.self).unique
            entry.stageError(EIO, unique: unique)
            commit(entry)
            return
        }
        var buffer = fuse_buf()
        buffer.size = request.count
        buffer.mem = request.baseAddress
        fuse_session_process_buf(session, &buffer)
        entry.wipeRebuiltHeader()
    }

    /// Called by `RingTransport` once `entry` holds its reply.
    func replied(_ entry: RingEntry) {
        if isServingThread {
            commit(entry)
        } else {
            handedOver.withLock { $0.append(entry) }
            var one: UInt64 = 1
            _ = write(wakeup, &one, 8)
        }
    }

    private func commit(_ entry: RingEntry) {
        // One command per entry in the kernel and a slot per entry: the queue has room.
        _ = protfs_ring_queue_commit(&ring, UInt16(queue), entry.commitID, UInt64(entry.index))
        committed.append(entry)
    }

    private func wokenUp() {
        var count: UInt64 = 0
        _ = read(wakeup, &count, 8)
        for entry in handedOver.withLock({ entries in defer { entries = [] }; return entries }) { commit(entry) }
        if !stopping.load(ordering: .acquiring) { _ = protfs_ring_queue_poll(&ring, wakeup, Self.wakeupTag) }
    }

    // MARK: - The thread

    /// Starts the thread, which opens the ring, reports through `opened`, waits
    /// for `go` (true: serve; false: give up) and serves. `ended` gets serve's result.
    func start(opened: @escaping @Sendable (Int32) -> Void, go: @escaping @Sendable () -> Bool,
               ended: @escaping @Sendable (Ending) -> Void) -> Bool {
        thread = try? JoinableThread { [self] in
            let status = open()
            opened(status)
            guard status == 0 else { return }
            guard go() else {
                protfs_ring_close(&ring)
                return
            }
            ended(serve())
        }
        return thread != nil
    }

    func join() { thread?.join() }
}
