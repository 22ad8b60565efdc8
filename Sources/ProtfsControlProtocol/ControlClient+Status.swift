extension ControlClient {
    /// The daemon's status, answered within `timeout`: `protfsctl list` asks every mount on
    /// the machine, and a daemon that never answers (any user may mount a fake one) must not
    /// hold it.
    public func status(within timeout: Duration) throws(ControlFailure) -> StatusReport {
        let socket = try connect()
        socket.setSendTimeout(timeout)
        try write(.status, secrets: [], to: socket)
        switch try socket.reading(until: Deadline(after: timeout), { source throws(ControlFailure) in try readReply(from: &source) }) {
        case .status(let report)?: return report
        case .failure(let failure)?: throw failure
        case let reply?: throw unexpected(reply)
        case nil: throw ControlFailure(.failure, "the protfs daemon of \(mountpoint) closed the connection without answering")
        }
    }
}
