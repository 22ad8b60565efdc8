import Dispatch
import ProtfsSystem
import Synchronization
import Testing

@Suite("Bounded handoff: first in first out between threads, never more than its capacity")
struct BoundedHandoffTests {
    @Test("elements arrive in order across threads, however the two sides interleave")
    func orderAcrossThreads() {
        let handoff = BoundedHandoff<Int>(capacity: 3)
        DispatchQueue.global().async {
            for value in 0..<10_000 { handoff.put(value) }
            handoff.finish()
        }
        var received: [Int] = []
        while let value = handoff.take() { received.append(value) }
        #expect(received == Array(0..<10_000))
    }

    @Test("a put waits while it is full and goes on once something is taken")
    func putWaitsWhenFull() {
        let handoff = BoundedHandoff<Int>(capacity: 2)
        handoff.put(1)
        handoff.put(2)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            handoff.put(3)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "a third element in a handoff of two")
        #expect(handoff.take() == 1)
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(handoff.take() == 2)
        #expect(handoff.take() == 3)
    }

    @Test("finish wakes a waiting taker and a waiting putter; what was put is still taken, then nil")
    func finishWakesBothSides() {
        let empty = BoundedHandoff<Int>(capacity: 1)
        let taken = Mutex<Int?>(-1)
        let tookNothing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let value = empty.take()
            taken.withLock { $0 = value }
            tookNothing.signal()
        }
        #expect(tookNothing.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        empty.finish()
        #expect(tookNothing.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(taken.withLock { $0 } == nil)

        let full = BoundedHandoff<Int>(capacity: 1)
        full.put(7)
        let refused = Atomic<Bool>(false)
        let putReturned = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            refused.store(!full.put(8), ordering: .releasing)
            putReturned.signal()
        }
        #expect(putReturned.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        full.finish()
        #expect(putReturned.wait(timeout: .now() + .seconds(10)) == .success)
        let dropped = refused.load(ordering: .acquiring)
        #expect(dropped, "a put into a finished handoff drops its element")
        #expect(full.take() == 7)
        #expect(full.take() == nil)
        #expect(!full.put(9))
    }
}
