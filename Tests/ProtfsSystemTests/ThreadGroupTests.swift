import ProtfsSystem
import Synchronization
import Testing

@Suite("Thread group: every thread joined, once")
struct ThreadGroupTests {
    @Test("joinAll waits for every thread and is true for its first call only")
    func joinsEveryThreadOnce() throws {
        let group = ThreadGroup()
        let finished = Atomic<Int>(0)
        for _ in 0..<4 {
            try group.start {
                var spin = 0
                for step in 0..<200_000 { spin &+= step }
                _ = spin
                finished.add(1, ordering: .releasing)
            }
        }
        #expect(group.joinAll())
        let count = finished.load(ordering: .acquiring)
        #expect(count == 4, "joinAll returned before a thread ended")
        #expect(!group.joinAll(), "a second joinAll would let its caller release twice")
    }
}
