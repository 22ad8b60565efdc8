import Dispatch
import ProtfsSystem
import Synchronization
import Testing

@Suite("Buffer pool: reused buffers, never more than the limit")
struct BufferPoolTests {
    @Test("past the limit a taker waits for a buffer given back, and gets that one")
    func takeWaitsAtTheLimit() {
        let pool = BufferPool(byteCount: 64, limit: 2)
        let first = pool.take(), second = pool.take()
        let taken = Atomic<UInt>(0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            taken.store(UInt(bitPattern: pool.take().baseAddress), ordering: .releasing)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "a third buffer while two are out")
        pool.give(second)
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(taken.load(ordering: .acquiring) == UInt(bitPattern: second.baseAddress), "the one given back, not a new one")
        pool.give(first)
        pool.give(second)
    }

    @Test("a pool goes away with a buffer still out (libdispatch traps on a semaphore below its start)")
    func deinitWithABufferOut() {
        var pool: BufferPool? = BufferPool(byteCount: 64, limit: 2)
        _ = pool!.take()
        pool = nil
        #expect(pool == nil)
    }

    @Test("a larger request gets a buffer of its own, outside the limit")
    func largerThanPooledIsFresh() {
        let pool = BufferPool(byteCount: 16, limit: 1)
        let held = pool.take()
        let size = pool.withBuffer(count: 100) { $0.count }
        #expect(size == 100)
        pool.give(held)
    }
}
