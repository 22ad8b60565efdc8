import Glibc
import ProtfsSystem
import Synchronization
import Testing

/// The one loop every wrapper runs its system call in: `EINTR` is tried again, any other
/// failure is thrown as its `Errno`, a result passes through.
@Suite("system calls: EINTR retried, errors mapped")
struct SyscallRetryingTests {
    @Test("a call interrupted twice is made a third time and its result returned")
    func interruptedCallsAreRetried() throws {
        var calls = 0
        let result = try syscallRetrying { () -> Int32 in
            calls += 1
            guard calls > 2 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
    }

    @Test("any other failure is thrown as its errno, at once")
    func failuresAreThrownAsTheirErrno() {
        for code in [ENOENT, EACCES, EAGAIN, EBADF] {
            var calls = 0
            #expect(throws: Errno(code)) {
                try syscallRetrying { () -> Int in
                    calls += 1
                    errno = code
                    return -1
                }
            }
            #expect(calls == 1, "errno \(code) was retried")
        }
    }

    @Test("results other than -1 are results, negative ones included")
    func otherResultsPassThrough() throws {
        #expect(try syscallRetrying { Int64(-2) } == -2)
        #expect(try syscallRetrying { 0 } == 0)
    }

    /// Signals that interrupt a blocked call: a handler without `SA_RESTART`, so the kernel
    /// returns `EINTR` rather than restarting the call itself.
    static let interruptions = Atomic<Int>(0)

    @Test("a real blocking call interrupted by signals goes on waiting (flock, SIGURG without SA_RESTART)")
    func blockingCallSurvivesSignals() throws {
        let scratch = try ScratchDirectory()
        let directory = scratch.fd
        let holder = try OwnedDescriptor.open("lock", in: directory, [.readWrite, .create])
        try holder.borrowed.setLock(exclusive: true, wait: true)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in SyscallRetryingTests.interruptions.add(1, ordering: .relaxed) }
        action.sa_flags = 0
        var previous = sigaction()
        sigaction(SIGURG, &action, &previous)
        defer { sigaction(SIGURG, &previous, nil) }
        let outcome = Mutex<Result<Void, Errno>?>(nil)
        let thread = Atomic<UInt>(0)
        let waiter = try JoinableThread {
            // Test threads inherit a mask that blocks most signals: this one takes SIGURG.
            var urgent = sigset_t()
            sigemptyset(&urgent)
            sigaddset(&urgent, SIGURG)
            pthread_sigmask(SIG_UNBLOCK, &urgent, nil)
            thread.store(pthread_self(), ordering: .releasing)
            let result: Result<Void, Errno>
            do throws(Errno) {
                let other = try OwnedDescriptor.open("lock", in: directory, .readWrite)
                try other.borrowed.setLock(exclusive: true, wait: true)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
        }
        while thread.load(ordering: .acquiring) == 0 { sched_yield() }
        let start = Self.interruptions.load(ordering: .relaxed)
        // Signals until several arrived while the waiter blocks on the held lock.
        while Self.interruptions.load(ordering: .relaxed) < start + 5 {
            pthread_kill(thread.load(ordering: .acquiring), SIGURG)
            usleep(5_000)
        }
        #expect(outcome.withLock { $0 } == nil, "the waiter gave up while the lock was held")
        _ = consume holder  // closing the holder's descriptor releases its lock
        waiter.join()
        let result = try #require(outcome.withLock { $0 })
        #expect(throws: Never.self) { try result.get() }
    }
}
