import CFuse
import CProtfsUring
import Glibc
import ProtfsSystem
import Synchronization

/// Serves a session's requests on a pool of worker threads, in place of libfuse's
/// `fuse_session_loop_mt`, so that the worker that just answered a small request takes the
/// next one without sleeping in between (`ReaderRota` decides who reads).
///
/// libfuse's loop has every idle worker sleep in `read(2)` on `/dev/fuse`; each request then
/// wakes one, often on the other core, and on a small virtual machine that wake-up costs
/// more than the daemon's work for a small request. So the reader handles small requests
/// itself and then polls the non-blocking device for `spinFor`, yielding the core to
/// anything runnable, before it sleeps in `poll(2)`. `spinFor` covers nearly every gap
/// between the requests of a synchronous program (tar, a loop creating files), so polling
/// longer would only burn the end of each burst. Polling pays only if the reader also
/// handles what it reads: a poller that hands each request to another thread pays a
/// wake-up each, and was slower than libfuse's loop. Large READ and WRITE requests still get
/// a worker of their own, and nobody polls while one is handled: their crypto runs on every
/// core.
final class RequestLoop: @unchecked Sendable {
    /// How long the reader keeps polling for the next request before it sleeps.
    static let spinFor = Duration.microseconds(50)
    /// See `ReaderRota`: how long one request may hold up the queue, how often the deputy
    /// looks in while the reader reads.
    static let takeOverAfter = Duration.microseconds(500)
    static let lookInterval = Duration.milliseconds(2)
    /// READ and WRITE requests from this size on are handed to their own worker: they take
    /// long enough to outweigh a wake-up, and their crypto runs on every core
    /// (`ChunkParallelism` spreads requests of 32 chunks and more).
    static let largeRequestBytes = 128 * 1024
    /// Room for the largest request: `max_write` of data and the headers before it.
    static let bufferBytes = LowLevelOperations.maxRequestBytes + 4096
    /// See `PollingHold`: a stream of `streakToHold` requests, each within `burstGap` of the
    /// one before, keeps idle CPUs polling until the reader has slept `linger` without one.
    static let streakToHold = 8
    static let burstGap = Duration.milliseconds(1)
    static let linger = Duration.milliseconds(2)

    private let session: OpaquePointer
    private let device: Int32
    private let maxWorkers: Int
    private let largeInFlight = Atomic<Int>(0)
    /// Keeps idle CPUs polling while requests stream in; nil when not wanted or not allowed.
    private let latency: CPULatencyRequest?
    private let pollingHold = Mutex(PollingHold(streakToHold: RequestLoop.streakToHold, burstGap: RequestLoop.burstGap))
    /// Told of INIT, to set up io_uring when wanted.
    private let transport: RingTransport?
    /// Readable once `wake` was called: the reader, asleep on the device, looks at the
    /// session's exit flag (with io_uring, no request may come through the device again).
    /// Nil when the kernel gave no eventfd: `wake` then waits for the next request.
    private let wakeup: OwnedDescriptor?

    // Guarded by `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Wakes the deputy (the reader went from sleeping to reading, or resigned).
    private let deputyCall: UnsafeMutablePointer<pthread_cond_t>
    /// Wakes one of the other idle workers (a deputy is wanted).
    private let followerCall: UnsafeMutablePointer<pthread_cond_t>
    private var rota = ReaderRota(takeOverAfter: RequestLoop.takeOverAfter, lookInterval: RequestLoop.lookInterval)
    /// Workers waiting for the reader's role (asleep, or awake to look in or to claim).
    private var idle = 0
    private var workers = 0
    private var threads: [JoinableThread] = []
    private var failure: Int32 = 0

    init(session: OpaquePointer, maxWorkers: Int, latency: CPULatencyRequest?, transport: RingTransport? = nil) {
        self.session = session
        self.latency = latency
        self.transport = transport
        let eventfd = protfs_eventfd()
        wakeup = eventfd >= 0 ? OwnedDescriptor(adopting: FileDescriptor(rawValue: eventfd)) : nil
        device = fuse_session_fd(session)
        self.maxWorkers = max(2, maxWorkers)
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        deputyCall = Self.monotonicCondition()
        followerCall = Self.monotonicCondition()
    }

    deinit {
        for condition in [deputyCall, followerCall] {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Wakes the reader if it sleeps, to see that the session exited (`fuse_session_exit`).
    func wake() {
        guard let wakeup = wakeup.borrowed else { return }
        var one: UInt64 = 1
        _ = write(wakeup.rawValue, &one, 8)
    }

    private static func monotonicCondition() -> UnsafeMutablePointer<pthread_cond_t> {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        return condition
    }

    /// Serves until the session ends (unmounted, or `fuse_session_exit`); returns 0 or the
    /// negative errno that ended it. Runs the first worker on the calling thread.
    func run() -> Int32 {
        let flags = fcntl(device, F_GETFL)
        _ = fcntl(device, F_SETFL, flags | O_NONBLOCK)
        locked { workers = 1 }
        work(0)
        let others = locked { threads }
        for thread in others { thread.join() }
        return locked { failure }
    }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: - A worker

    private func work(_ worker: Int) {
        // Requests carry written plaintext and names: the buffer is locked in memory. Mapped,
        // not malloc'ed: pages a request never reached stay unallocated (and unlocked).
        guard let buffer = PlaintextMemory.map(byteCount: Self.bufferBytes) else {
            stop(status: -ENOMEM)
            return
        }
        defer { PlaintextMemory.unmap(buffer) }
        while claimReader(worker) {
            switch receive(into: buffer, worker: worker) {
            case .request(let count):
                handle(UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< count]), worker: worker)
                if fuse_session_exited(session) != 0 { stop(status: 0) }
            case .ended(let status):
                fuse_session_exit(session)
                stop(status: status)
            }
        }
    }

    /// Waits until `worker` is the reader (true) or the loop stops (false).
    private func claimReader(_ worker: Int) -> Bool {
        pthread_mutex_lock(mutex)
        idle += 1
        defer {
            idle -= 1
            pthread_mutex_unlock(mutex)
        }
        while true {
            switch rota.claim(worker, now: MonotonicClock.nanoseconds()) {
            case .leave:
                return false
            case .read:
                // Keep one idle worker in reserve to be the deputy (a deputy awake to look
                // in counts: spawning for it grew the pool to its limit, and every thread's
                // malloc arena doubled the daemon's memory), and call one to take the
                // deputy's place if the deputy just became the reader.
                if idle == 1, workers < maxWorkers { spawnWorker() }
                if rota.deputy == nil, idle > 1 { pthread_cond_signal(followerCall) }
                return true
            case .sleep(let until):
                wait(on: rota.deputy == worker ? deputyCall : followerCall, until: until)
            }
        }
    }

    private func wait(on condition: UnsafeMutablePointer<pthread_cond_t>, until deadline: UInt64?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = pthread_cond_timedwait(condition, mutex, &time)
    }

    /// Called with the mutex held.
    private func spawnWorker() {
        let index = workers
        guard let thread = try? JoinableThread({ [self] in work(index) }) else { return }
        workers += 1
        threads.append(thread)
    }

    private func stop(status: Int32) {
        locked {
            if failure == 0 { failure = status }
            rota.stop()
            pthread_cond_broadcast(deputyCall)
            pthread_cond_broadcast(followerCall)
        }
        // A deputy that took the reader's role while another worker handled the last request
        // sleeps in poll(2) on the device, which no request may wake again.
        wake()
    }

    // MARK: - Reading and handling

    private enum Received {
        case request(Int)
        /// Unmounted (0) or the device failed (negative errno).
        case ended(Int32)
    }

    private func receive(into buffer: UnsafeMutableRawBufferPointer, worker: Int) -> Received {
        var spinUntil = MonotonicClock.nanoseconds(after: Self.spinFor)
        while true {
            let count = Glibc.read(device, buffer.baseAddress, buffer.count)
            if count >= MemoryLayout<fuse_in_header>.size {
                if latency != nil {
                    let now = MonotonicClock.nanoseconds()
                    updateHold { $0.requestRead(at: now) }
                }
                return .request(count)
            }
            if count >= 0 { return .ended(-EIO) }
            switch errno {
            case EINTR, ENOENT:
                // ENOENT: the request was interrupted before it was read; take the next one.
                continue
            case ENODEV:
                return .ended(0)
            case EAGAIN:
                if fuse_session_exited(session) != 0 { return .ended(0) }
                if largeInFlight.load(ordering: .relaxed) == 0, MonotonicClock.nanoseconds() < spinUntil {
                    // Polling must not keep the requester (or the kernel's writeback) off
                    // this core: anything else runnable here goes first.
                    sched_yield()
                    continue
                }
                sleepUntilRequest(worker)
                spinUntil = MonotonicClock.nanoseconds(after: Self.spinFor)
            case let error:
                return .ended(-error)
            }
        }
    }

    private func sleepUntilRequest(_ worker: Int) {
        locked { rota.readerWaits(worker) }
        var device = pollfd(fd: self.device, events: Int16(POLLIN), revents: 0)
        if latency != nil, pollingHold.withLock({ $0.holding }), !Self.wait(for: &device, within: Self.linger) {
            updateHold { $0.lingered() }
        }
        var either = [device, pollfd(fd: wakeup.borrowed?.rawValue ?? -1, events: Int16(POLLIN), revents: 0)]
        while poll(&either, 2, -1) < 0, errno == EINTR {}
        locked {
            rota.readerReads(worker)
            // The deputy slept while the reader did; it looks in again from now on.
            pthread_cond_signal(deputyCall)
        }
    }

    /// Whether `device` became readable within `time` (in poll(2)'s whole milliseconds).
    private static func wait(for device: inout pollfd, within time: Duration) -> Bool {
        let milliseconds = Int32(time.wholeNanoseconds / 1_000_000)
        var ready = poll(&device, 1, milliseconds)
        while ready < 0, errno == EINTR { ready = poll(&device, 1, milliseconds) }
        return ready > 0
    }

    /// Updates the hold and tells the kernel what changed, under the hold's lock, so that
    /// changes reach it in the order they were decided whichever worker reads.
    private func updateHold(_ update: (inout PollingHold) -> PollingHold.Change?) {
        guard let latency else { return }
        pollingHold.withLock { hold in
            guard let change = update(&hold) else { return }
            // A refused request changes nothing but the speed of the next requests.
            try? latency.keepCPUsPolling(change == .hold)
        }
    }

    private func handle(_ request: UnsafeMutableRawBufferPointer, worker: Int) {
        let large = Self.isLarge(request)
        if large {
            largeInFlight.add(1, ordering: .relaxed)
            locked {
                rota.resign(worker)
                pthread_cond_signal(rota.deputy == nil ? followerCall : deputyCall)
            }
        } else {
            let now = MonotonicClock.nanoseconds()
            locked { rota.readerHandles(worker, since: now) }
        }
        var buffer = fuse_buf()
        buffer.size = request.count
        buffer.mem = request.baseAddress
        let isInit = request.loadUnaligned(as: fuse_in_header.self).opcode == FUSE_INIT.rawValue
        if isInit { transport?.initRequested(request) }
        fuse_session_process_buf(session, &buffer)
        if isInit { transport?.initAnswered() }
        // Requests carry names and written plaintext, and the buffer is reused: wipe it.
        PlaintextMemory.wipe(request)
        if large { largeInFlight.subtract(1, ordering: .relaxed) }
    }

    /// The arguments of the WRITE whose payload starts at `payload`. The loop hands libfuse
    /// whole request buffers as the kernel wrote them (never a spliced pipe), and libfuse
    /// passes a WRITE's payload as the bytes right after its `fuse_write_in`; libfuse 3.14
    /// keeps `write_flags` to itself otherwise.
    static func writeArguments(precedingPayload payload: UnsafeRawPointer) -> fuse_write_in {
        (payload - MemoryLayout<fuse_write_in>.size).loadUnaligned(as: fuse_write_in.self)
    }

    /// A READ or WRITE of `largeRequestBytes` or more.
    static func isLarge(_ request: UnsafeMutableRawBufferPointer) -> Bool {
        let header = request.loadUnaligned(as: fuse_in_header.self)
        switch Int(header.opcode) {
        case Int(FUSE_WRITE.rawValue):
            return request.count >= largeRequestBytes
        case Int(FUSE_READ.rawValue):
            let arguments = MemoryLayout<fuse_in_header>.size
            guard request.count >= arguments + MemoryLayout<fuse_read_in>.size else { return false }
            let read = request.loadUnaligned(fromByteOffset: arguments, as: fuse_read_in.self)
            return Int(read.size) >= largeRequestBytes
        default:
            return false
        }
    }
}
