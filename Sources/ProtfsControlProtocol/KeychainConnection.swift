import Glibc
import ProtfsCrypto
import ProtfsSystem
import Synchronization

/// Why a request to the keychain vault's daemon got no answer of that daemon's.
public enum KeychainConnectionError: Error, Sendable {
    /// No vault is chosen (`KeychainChoice`), and why, for the user.
    case noKeychain(String)
    /// The chosen vault's daemon cannot be reached or did not answer.
    case unreachable(mountpoint: String, ControlFailure)
    /// The daemon refused the request (its `failure` reply).
    case refused(ControlFailure)
}

/// The connection a keychain client keeps to its vault's daemon (the Secret Service provider,
/// a program calling `SecItem*`; docs/CONTROL.md, "Kept connections"): the vault is chosen
/// once (`KeychainChoice`, which reads the mount table and may ask each mount's daemon for its
/// owner) and chosen again only when its daemon cannot be reached, and every request goes on
/// one connection, so a call costs one round trip instead of a mount-table scan, a connection
/// and a daemon thread. Safe from any thread: requests take turns on the connection, as the
/// daemon serves a uid's item requests one at a time anyway.
///
/// The daemon ends a connection that stays idle (`ControlLimits.idleTimeout`), one it ended to
/// make room for another of the same uid, and every connection when it stops; a request that
/// meets a kept connection closed before its reply began is sent again, once, on a new
/// connection to a vault chosen again. That is safe: the daemon ends a kept connection only
/// while no request is in progress on it, so the first sending was not served; only a daemon
/// that stops in the middle of a request (an unmount) may have served it, and the vault is
/// then gone for the second sending too, or the second fails as the first's duplicate.
public final class KeychainConnection: Sendable {
    private let given: KeychainChoice.Named?
    private let kept = Mutex<Kept?>(nil)
    /// Connections made so far (the kept one and those of `exchangeAlone`), for tests that
    /// count what a call costs.
    private let made = Atomic<Int>(0)

    var connectionsMade: Int { made.load(ordering: .relaxed) }

    /// A connection and the client that made it; the socket closes when the last holder lets go.
    private final class Kept: Sendable {
        let client: ControlClient
        let socket: UnixSocket

        init(client: ControlClient, socket: consuming UnixSocket) {
            self.client = client
            self.socket = socket
        }
    }

    /// `given`: the vault named in code or on the command line (`givenSource` says how); nil
    /// chooses as `KeychainChoice.current` does.
    public init(given: String?, givenSource: String) {
        self.given = given.flatMap { $0.isEmpty ? nil : KeychainChoice.Named($0, source: givenSource) }
    }

    /// The mount point of the vault the kept connection goes to, if there is one now.
    public var mountpoint: String? { kept.withLock { $0?.client.mountpoint } }

    /// Sends `request` with its secrets and returns the reply (and the secret after an item
    /// reply, in locked memory); a `failure` reply is thrown as `.refused`.
    public func exchange(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(KeychainConnectionError)
        -> ControlReplyMessage {
        try kept.withLock { (kept) throws(KeychainConnectionError) -> ControlReplyMessage in
            if let current = kept {
                let outcome = Self.exchange(request, secrets: secrets, on: current)
                if case .closedBeforeReply = outcome {
                    kept = nil
                } else {
                    return try Self.answer(outcome, from: current)
                }
            }
            let fresh = try connect()
            let outcome = Self.exchange(request, secrets: secrets, on: fresh)
            if case .answered = outcome { kept = fresh }
            return try Self.answer(outcome, from: fresh)
        }
    }

    /// Sends `request` on a connection of its own, to the vault the kept connection goes to
    /// (chosen now if none): for a request that may take long (an unlock, which derives the
    /// passcode's key), so that it does not hold up the others.
    public func exchangeAlone(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(KeychainConnectionError)
        -> ControlReplyMessage {
        let alone = try kept.withLock { (kept) throws(KeychainConnectionError) -> Kept in
            if let current = kept, let socket = try? current.client.connect() {
                made.add(1, ordering: .relaxed)
                return Kept(client: current.client, socket: socket)
            }
            return try connect()
        }
        return try Self.answer(Self.exchange(request, secrets: secrets, on: alone), from: alone)
    }

    /// A connection to the vault chosen now.
    private func connect() throws(KeychainConnectionError) -> Kept {
        let mountpoint: String
        switch KeychainChoice.current(named: given ?? KeychainChoice.namedOutsideCode()) {
        case .found(let found): mountpoint = found
        case .none(let reason): throw .noKeychain(reason)
        }
        do throws(ControlFailure) {
            let client = try ControlClient(mountpoint: mountpoint)
            let socket = try client.connect()
            made.add(1, ordering: .relaxed)
            return Kept(client: client, socket: socket)
        } catch {
            throw .unreachable(mountpoint: mountpoint, error)
        }
    }

    private enum Outcome {
        case answered(ControlReplyMessage)
        /// The connection ended before the first byte of a reply: the request was not served.
        case closedBeforeReply
        case failed(ControlFailure)
    }

    private static func exchange(_ request: ControlRequest, secrets: [SecureBuffer], on kept: Kept) -> Outcome {
        do {
            try kept.socket.writing { sink throws(ControlWireError) in try ControlWire.write(request, secrets: secrets, to: &sink) }
        } catch .system(_, let errno) where errno == EPIPE || errno == ECONNRESET {
            // Ended by the daemon; a refusal it sent before closing is its answer.
            let refusal = try? kept.socket.reading(until: Deadline(after: .seconds(1))) { source throws(ControlWireError) in
                try ControlWire.readReplyMessage(from: &source)
            }
            if let message = refusal ?? nil { return .answered(message) }
            return .closedBeforeReply
        } catch {
            return .failed(ControlFailure(.failure, "cannot send the request to the protfs daemon of \(kept.client.mountpoint): \(error)"))
        }
        do {
            let reply = try kept.socket.reading(until: nil) { source throws(ControlWireError) in
                try ControlWire.readReplyMessage(from: &source)
            }
            guard let message = reply else { return .closedBeforeReply }
            return .answered(message)
        } catch .system(_, let errno) where errno == ECONNRESET {
            return .closedBeforeReply
        } catch {
            return .failed(ControlFailure(.failure, "the reply of the protfs daemon of \(kept.client.mountpoint) was not understood: \(error)"))
        }
    }

    private static func answer(_ outcome: Outcome, from kept: Kept) throws(KeychainConnectionError) -> ControlReplyMessage {
        switch outcome {
        case .answered(let message):
            if case .failure(let failure) = message.reply { throw .refused(failure) }
            return message
        case .failed(let failure): throw .unreachable(mountpoint: kept.client.mountpoint, failure)
        case .closedBeforeReply:
            throw .unreachable(mountpoint: kept.client.mountpoint, ControlFailure(
                .failure, "the protfs daemon of \(kept.client.mountpoint) closed the connection without answering; see its log"))
        }
    }
}
