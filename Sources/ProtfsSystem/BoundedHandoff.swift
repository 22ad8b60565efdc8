import Glibc

/// A first-in first-out handoff of work between two threads, holding at most `capacity`
/// elements: `put` waits while it is full, `take` while it is empty. Either side may
/// `finish` it: a `put` then drops its element and a `take` returns what is left, then nil,
/// so neither side ever waits for a thread that has gone.
public final class BoundedHandoff<Element>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`: a ring of `slots.count` slots, `count` of them full from `first`.
    // A taken element leaves its slot, so the taker holds the only reference (and can wipe it).
    private var slots: [Element?]
    private var first = 0
    private var count = 0
    private var finished = false

    public init(capacity: Int) {
        precondition(capacity > 0)
        slots = Array(repeating: nil, count: capacity)
        mutex = .allocate(capacity: 1)
        changed = .allocate(capacity: 1)
        precondition(pthread_mutex_init(mutex, nil) == 0 && pthread_cond_init(changed, nil) == 0)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Appends `element` once there is room; false (and `element` dropped) once finished.
    @discardableResult
    public func put(_ element: Element) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !finished && count == slots.count { pthread_cond_wait(changed, mutex) }
        guard !finished else { return false }
        slots[(first + count) % slots.count] = element
        count += 1
        pthread_cond_broadcast(changed)
        return true
    }

    /// The oldest element, once there is one; nil once finished and empty.
    public func take() -> Element? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !finished && count == 0 { pthread_cond_wait(changed, mutex) }
        guard count > 0 else { return nil }
        let element = slots[first].take()!
        first = (first + 1) % slots.count
        count -= 1
        pthread_cond_broadcast(changed)
        return element
    }

    /// No more `put`s; wakes whoever waits.
    public func finish() {
        pthread_mutex_lock(mutex)
        finished = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }
}
