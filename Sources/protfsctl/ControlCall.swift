import ProtfsControlClient
import ProtfsCrypto

extension ControlClient {
    /// Sends a request that answers `done` (lock, unlock, passwd).
    func perform(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) {
        let reply = try send(request, secrets: secrets)
        guard reply == .done else { throw unexpected(reply) }
    }
}
