import ProtfsControlProtocol
import ProtfsCrypto

extension ControlClient {
    /// Sends a request that answers `done` (lock, unlock, passwd).
    func perform(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) {
        let reply = try send(request, secrets: secrets)
        guard reply == .done else { throw unexpected(reply) }
    }
}

extension ControlClient {
    /// Whether the vault has a passcode (docs/BACKUP.md), asked before reading one.
    func passcodeSet() throws(ControlFailure) -> Bool {
        let reply = try send(.status)
        guard case .status(let report) = reply else { throw unexpected(reply) }
        return report.passcodeSet
    }
}
