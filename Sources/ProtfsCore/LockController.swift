import ProtfsSystem
import Synchronization

/// Decides, request by request, what the current lock state allows. Every content request
/// holds the state shared from its policy check to the end of its crypto; a transition
/// takes it exclusively only to flip the state and drop keys, so a key is never wiped under
/// a request that is using it.
public final class LockController: Sendable {
    private let gate = ReadWriteLock()
    private let current: Mutex<LockState>

    public init(initialState: LockState) {
        current = Mutex(initialState)
    }

    public var state: LockState { current.withLock { $0 } }

    /// Runs `body` with the state held shared; `body` gets the state to check the policy
    /// against, and the state cannot change until it returns.
    public func withSharedHold<R, E: Error>(_ body: (LockState) throws(E) -> R) throws(E) -> R {
        try gate.withShared { () throws(E) -> R in try body(state) }
    }

    /// Checks `access` for `protectionClass` and runs `body` under the same shared hold.
    public func perform<R>(_ access: ContentAccess, on protectionClass: ProtectionClass,
                           _ body: () throws(Errno) -> R) throws(Errno) -> R {
        try withSharedHold { (state) throws(Errno) -> R in
            try AccessPolicy.check(access, of: protectionClass, in: state)
            return try body()
        }
    }

    /// Moves to `newState`, running `body` (key installation or wiping) while no request
    /// holds the state.
    public func transition(to newState: LockState, _ body: () -> Void = {}) {
        gate.withExclusive {
            body()
            current.withLock { $0 = newState }
        }
    }
}
