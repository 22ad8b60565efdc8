import ProtfsDomain
import Glibc
import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsSystem

/// One accepted connection: reads the request within the time limit, checks the peer,
/// calls the handler and replies. Every malformed input gets a `failure` reply naming the
/// problem (a connection that sent nothing is just closed); nothing a client sends can
/// crash the daemon or keep this thread past the limit, except a `watch`, which lasts as
/// long as its client.
struct ControlSession {
    let connection: SharedSocket
    /// Who connected (`SO_PEERCRED`, taken at accept).
    let peer: UnixSocket.Peer
    let handler: any ControlHandler
    let mountpoint: String
    let mountingUser: uid_t
    /// Counts this connection as a watch; the reason when its uid may not hold one more.
    let startWatch: @Sendable () -> String?
    /// Counts this connection as an item request in flight; the reason when its uid may not
    /// start one more (`ControlAdmission`).
    let startItemRequest: @Sendable () -> String?

    func serve() {
        connection.socket.setSendTimeout(ControlLimits.requestTimeout)
        let deadline = Deadline(after: ControlLimits.requestTimeout)
        let message: ControlRequestMessage
        do {
            message = try connection.socket.reading(until: deadline) { source throws(ControlWireError) in try ControlWire.readRequest(from: &source) }
        } catch .closed {
            return  // a liveness probe, or a client that changed its mind
        } catch {
            reply(.failure(ControlFailure(.failure, "the daemon refused the request: \(error)")))
            return
        }
        if let refusal = refusal(of: message.request) {
            reply(.failure(refusal))
            return
        }
        switch message.request {
        case .watch:
            if let refusal = startWatch() {
                reply(.failure(ControlFailure(.failure, refusal)))
            } else {
                watch()
            }
        case .item(let request):
            if let refusal = startItemRequest() {
                reply(.failure(ControlFailure(.failure, refusal)))
            } else {
                reply(answer(request, secrets: message.secrets))
            }
        case .backup(let withPasscode): reply(backup(message.secrets, withPasscode: withPasscode, deadline: deadline))
        default: reply(answer(message))
        }
    }

    /// Items belong to the peer's uid; only root names another (`--uid`).
    private func answer(_ request: ItemRequest, secrets: [SecureBuffer]) -> ControlReplyMessage {
        guard let peer = connection.socket.peer() else {
            return ControlReplyMessage(reply: .failure(ControlFailure(.failure, "not allowed: the daemon could not tell who is asking")))
        }
        if let uid = request.uid, uid != peer.uid, peer.uid != 0 {
            return ControlReplyMessage(reply: .failure(ControlFailure(.failure, "not allowed: only root may act for another uid; "
                                                                      + "you are uid \(peer.uid)")))
        }
        do throws(ControlFailure) {
            return try handler.item(request.operation, owner: request.uid ?? peer.uid, secret: secrets.first)
        } catch {
            return ControlReplyMessage(reply: .failure(error))
        }
    }

    /// The owner (`-o owner=`, by default the user who mounted) and root.
    private var peerIsPrivileged: Bool { MountPrivilege(owner: mountingUser).isPrivileged(peer.uid) }

    /// Privileged requests are for the owner and root only (SO_PEERCRED).
    private func refusal(of request: ControlRequest) -> ControlFailure? {
        guard request.needsMountingUser, !peerIsPrivileged else { return nil }
        return ControlFailure(.failure, "not allowed: only the owner of \(mountpoint) (uid \(mountingUser)) and root "
                              + "may \(request.action) it; you are uid \(peer.uid)")
    }

    /// Anyone may ask for the status; the daemon's pid and the backing directory are told to
    /// the owner and root only.
    private func status() -> StatusReport {
        var report = handler.status(caller: connection.socket.peer()?.uid)
        report.owner = mountingUser
        report.callerMayLock = peerIsPrivileged
        if !peerIsPrivileged {
            report.pid = nil
            report.backing = nil
        }
        return report
    }

    private func answer(_ message: ControlRequestMessage) -> ControlReply {
        do throws(ControlFailure) {
            switch message.request {
            case .status:
                return .status(status())
            case .lock(let mode):
                try handler.lock(mode, by: Requester(peer))
                return .done
            case .unlock:
                try handler.unlock(passcode: message.secrets[0], by: Requester(peer))
                return .done
            case .changePasscode:
                try handler.changePasscode(old: message.secrets[0], new: message.secrets[1])
                return .done
            case .unlockWithoutPasscode:
                try handler.unlock(passcode: nil, by: Requester(peer))
                return .done
            case .setPasscode:
                try handler.changePasscode(old: nil, new: message.secrets[0])
                return .done
            case .removePasscode:
                try handler.changePasscode(old: message.secrets[0], new: nil)
                return .done
            case .backingPath(let components):
                return .backingPath(try handler.backingPath(of: components))
            case .watch, .item, .backup:
                preconditionFailure("served by watch(), answer(_:secrets:) and backup(_:withPasscode:deadline:)")
            }
        } catch {
            return .failure(error)
        }
    }

    /// Takes the archive's descriptor, which follows the secrets within the request's time,
    /// and runs the backup on this connection's thread, telling the client how far it is.
    private func backup(_ secrets: [SecureBuffer], withPasscode: Bool, deadline: Deadline) -> ControlReply {
        let archive: OwnedDescriptor?
        do { archive = try connection.socket.receiveDescriptor(deadline: deadline) } catch {
            return .failure(ControlFailure(.failure, "the daemon refused the request: \(error)"))
        }
        guard let archive else {
            return .failure(ControlFailure(.failure, "the daemon refused the request: the archive's descriptor is missing"))
        }
        let progress = BackupProgressReport(connection: connection)
        do throws(ControlFailure) {
            let leftOut = try handler.backup(into: archive.borrowed, passcode: withPasscode ? secrets[0] : nil,
                                             passphrase: secrets[secrets.count - 1], caller: peer.uid, progress: progress.send)
            return .backedUp(leftOut)
        } catch {
            return .failure(error)
        }
    }

    /// Subscribes, sends the state line, then waits for the client to go away (events are
    /// sent by the subscription from the daemon's thread meanwhile).
    private func watch() {
        let subscription = WatchSubscription(connection: connection)
        let current = handler.watch { event in subscription.deliver(event) }
        subscription.start(current: current)
        waitForHangUp()
        subscription.finish()
    }

    /// Returns when the client closes its end, sends anything (a watch takes no input), or
    /// the socket is shut down.
    private func waitForHangUp() {
        var byte: UInt8 = 0
        _ = withUnsafeMutableBytes(of: &byte) { buffer in try? connection.socket.receive(into: buffer, deadline: nil) }
    }

    private func reply(_ reply: ControlReply) { self.reply(ControlReplyMessage(reply: reply)) }

    /// Sends the reply and the secret of an `item` reply, straight from locked memory. A
    /// reply too large for the wire (refused before its first byte) is answered with a
    /// failure that says so; a client that left needs no answer.
    private func reply(_ message: ControlReplyMessage) {
        connection.socket.writing { sink in
            do throws(ControlWireError) {
                try ControlWire.write(message.reply, secret: message.secret, to: &sink)
            } catch .lengthOutOfRange(_, let length, let range) {
                let reason = "the answer would take \(length) bytes, more than the \(range.upperBound) one answer may; "
                    + "ask for less (a narrower query or a limit)"
                try? ControlWire.write(.failure(ControlFailure(.failure, reason)), to: &sink)
            } catch {
                return
            }
        }
    }
}
