import Dispatch
@testable import ProtfsFollow
import Testing

@Suite("stream-end signal: a pipe the follower and its watcher threads share")
struct StreamEndSignalTests {
    @Test("each raise is taken once, without waiting; none raised reads as none")
    func raisedOnce() throws {
        let signal = try StreamEndSignal()
        #expect(!signal.take())
        signal.raise()
        #expect(signal.take())
        #expect(!signal.take())
    }

    @Test("a watcher that outlives the follower's hold still writes to its own pipe")
    func watcherOutlivesTheFollower() throws {
        var signal: StreamEndSignal? = try StreamEndSignal()
        let watcher = signal!
        signal = nil
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            watcher.raise()
            done.signal()
        }
        done.wait()
        #expect(watcher.take())
    }
}
