/// A socket that more than one thread uses: one blocks on it, another shuts it down to wake
/// it (a server that stops, a watch cancelled). The last holder to let go closes it, so a
/// shutdown can never reach a descriptor number the kernel has meanwhile given to another file.
public final class SharedSocket: Sendable {
    public let socket: UnixSocket

    public init(_ socket: consuming UnixSocket) { self.socket = socket }
}
