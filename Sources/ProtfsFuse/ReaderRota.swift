/// Which worker thread takes the next request from the kernel, and when another one takes
/// over: the pure decisions behind `RequestLoop`, with the clock passed in.
///
/// One worker at a time, the reader, takes requests from `/dev/fuse` and handles most of
/// them itself, then goes back for the next one without sleeping first. On a machine
/// where waking a sleeping thread on another core costs more than a small request (tens of
/// microseconds on a virtual machine), that is what makes a stream of small requests
/// cheap. The price is that a request the reader is slow with holds up the queue, so one
/// idle worker, the deputy, looks in at intervals and takes the reader's place once the
/// reader has been busy with one request for `takeOverAfter` (a request that waits on
/// another one, such as a page-cache invalidation that waits for a read, then still gets
/// its partner served). The other idle workers sleep until they are needed.
struct ReaderRota {
    /// What the reader is doing.
    enum Phase: Equatable {
        /// Asleep until a request arrives: the deputy need not look in.
        case waiting
        /// Taking requests as they come.
        case reading
        /// Handling a request since the given time.
        case handling(since: UInt64)
    }

    /// What a worker asking for the reader's role does next.
    enum Claim: Equatable {
        /// Read requests: this worker is the reader.
        case read
        /// Sleep until woken, or until the given time at the latest.
        case sleep(until: UInt64?)
        /// The loop is stopping: leave.
        case leave
    }

    private(set) var reader: Int?
    private(set) var deputy: Int?
    private(set) var phase = Phase.waiting
    private(set) var stopping = false
    /// How long the reader may handle one request before the deputy takes over reading.
    let takeOverAfter: Duration
    /// How often the deputy looks in while the reader is reading.
    let lookInterval: Duration

    init(takeOverAfter: Duration, lookInterval: Duration) {
        self.takeOverAfter = takeOverAfter
        self.lookInterval = lookInterval
    }

    /// `worker` asks to read at time `now`. A worker that is refused becomes the deputy if
    /// there is none, and sleeps until the returned time.
    mutating func claim(_ worker: Int, now: UInt64) -> Claim {
        if stopping { return .leave }
        if reader == worker {
            phase = .reading
            return .read
        }
        guard reader != nil else { return takeOver(worker) }
        if deputy == nil { deputy = worker }
        guard deputy == worker else { return .sleep(until: nil) }
        switch phase {
        case .waiting:
            return .sleep(until: nil)
        case .reading:
            return .sleep(until: now + lookInterval.wholeNanoseconds)
        case .handling(let since):
            let due = since + takeOverAfter.wholeNanoseconds
            return now >= due ? takeOver(worker) : .sleep(until: due)
        }
    }

    private mutating func takeOver(_ worker: Int) -> Claim {
        reader = worker
        if deputy == worker { deputy = nil }
        phase = .reading
        return .read
    }

    /// The reader is going to sleep until a request arrives.
    mutating func readerWaits(_ worker: Int) {
        if reader == worker { phase = .waiting }
    }

    /// The reader has a request to take (after sleeping or not).
    mutating func readerReads(_ worker: Int) {
        if reader == worker { phase = .reading }
    }

    /// The reader starts handling a request itself.
    mutating func readerHandles(_ worker: Int, since now: UInt64) {
        if reader == worker { phase = .handling(since: now) }
    }

    /// `worker` gives up reading (it will handle a large request, or it is stopping): the
    /// next claim takes over at once.
    mutating func resign(_ worker: Int) {
        guard reader == worker else { return }
        reader = nil
        phase = .waiting
    }

    /// Every worker leaves at its next claim.
    mutating func stop() {
        stopping = true
    }
}
