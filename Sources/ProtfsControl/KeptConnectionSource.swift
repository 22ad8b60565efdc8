import ProtfsControlProtocol

/// The bytes of one request on a connection the client keeps: the first request must be
/// whole within `ControlLimits.requestTimeout` of the accept; a later one may begin any time
/// before `idle` (the client is between calls), and must then be whole within the request
/// timeout of its first byte, so a client that trickles bytes holds the thread no longer
/// than one that sends nothing.
struct KeptConnectionSource: ControlByteSource {
    let connection: SharedSocket
    /// Until when the next request may begin; nil for the connection's first.
    let idle: Deadline?
    /// Until when the request must be whole.
    private(set) var deadline = Deadline(after: ControlLimits.requestTimeout)
    /// Whether a byte of the request arrived.
    private(set) var started = false

    init(connection: SharedSocket, idle: Deadline?) {
        self.connection = connection
        self.idle = idle
    }

    /// Whether the connection ended while waiting for a request to begin (not an error).
    var waitedIdle: Bool { idle != nil && !started }

    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        var done = 0
        while done < buffer.count {
            let wait = started ? deadline : idle ?? deadline
            let n = try connection.socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), deadline: wait)
            if n == 0 { throw done == 0 ? .closed : .truncated }
            if !started, idle != nil { deadline = Deadline(after: ControlLimits.requestTimeout) }
            started = true
            done += n
        }
    }
}
