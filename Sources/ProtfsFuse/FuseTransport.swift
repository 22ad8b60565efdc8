import Glibc
import ProtfsLog
import Synchronization

/// A way for requests to reach the daemon besides `/dev/fuse`, which carries INIT, FORGET,
/// INTERRUPT and the daemon's notifications whatever else does (docs/ARCHITECTURE.md,
/// "Transports"). It is decided at INIT: the session shows the transport the INIT request
/// before libfuse answers it, tells it once answered, offers it every reply libfuse writes,
/// and ends it after the unmount. FUSE over io_uring (`ProtfsFuseUring`) is one; without
/// one, `/dev/fuse` carries everything.
public protocol FuseTransport: AnyObject, Sendable {
    /// The INIT request as read from `/dev/fuse`, before libfuse answers it: the transport
    /// sets itself up and says in the log which transport serves; returns the INIT flags past
    /// bit 31 it asks for, 0 when it will not serve.
    func initRequested(_ request: UnsafeMutableRawBufferPointer) -> UInt32
    /// INIT is answered, with the flags asked for: the transport serves.
    func initAnswered()
    /// Sends libfuse's reply through the transport when its request came that way: true, or
    /// false when the reply goes to `/dev/fuse`.
    func reply(_ iov: UnsafePointer<iovec>, _ count: Int) -> Bool
    /// Called when the transport fails and ends the session, to wake the `/dev/fuse` loop.
    func whenSessionEnds(_ wake: @escaping @Sendable () -> Void)
    /// After the unmount: stops serving and releases what it holds.
    func finish()
}

/// Makes a session's transport from its libfuse session (`fuse_session`) and the daemon's log.
public typealias MakeFuseTransport = (_ session: OpaquePointer, _ log: DaemonLog) -> any FuseTransport

/// The session's transport as decided at INIT: the one the daemon gave, or `/dev/fuse` alone.
/// While one serves, the adapter holds this (unretained; the session keeps it) to route replies.
final class TransportChoice: Sendable {
    private let transport: (any FuseTransport)?
    private let adapter: FuseAdapter

    init(_ transport: (any FuseTransport)?, adapter: FuseAdapter) {
        self.transport = transport
        self.adapter = adapter
    }

    func initRequested(_ request: UnsafeMutableRawBufferPointer) {
        guard let transport else {
            adapter.log.info("transport: /dev/fuse")
            return
        }
        let flags = transport.initRequested(request)
        adapter.transportInitFlags.store(flags, ordering: .releasing)
        if flags != 0 { adapter.transportAddress.store(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()), ordering: .releasing) }
    }

    func initAnswered() { transport?.initAnswered() }

    func reply(_ iov: UnsafePointer<iovec>, _ count: Int) -> Bool { transport?.reply(iov, count) ?? false }

    func whenSessionEnds(_ wake: @escaping @Sendable () -> Void) { transport?.whenSessionEnds(wake) }

    func finish() {
        adapter.transportAddress.store(0, ordering: .releasing)
        transport?.finish()
    }
}
