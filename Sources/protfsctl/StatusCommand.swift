import Foundation
import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsSystem

/// `protfsctl status MOUNTPOINT [--json]`: the lock state and the daemon's settings, as one
/// JSON object (docs/CONTROL.md's fields) or for people.
enum StatusCommand {
    static let command = Command(name: "status", synopsis: "MOUNTPOINT [--json]", flags: ["--json"]) { arguments in
        let mountpoint = try arguments.operands("MOUNTPOINT")[0]
        let client = try ControlClient(mountpoint: mountpoint)
        let reply = try client.send(.status)
        guard case .status(let report) = reply else { throw client.unexpected(reply) }
        writeOutput(arguments.isSet("--json") ? try json(report) : text(report))
    }

    static func json(_ report: StatusReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }

    static func text(_ report: StatusReport) -> String {
        var state = report.state.rawValue
        if let left = report.graceSecondsLeft { state += " (\(left) s of grace left)" }
        var rows: [(String, String)] = [("state", state), ("mount point", report.mountpoint)]
        if let owner = report.owner { rows.append(("owner", userName(owner))) }
        // Told to the owner and root only.
        if let backing = report.backing { rows.append(("backing directory", backing)) }
        if let pid = report.pid { rows.append(("daemon pid", String(pid))) }
        rows += [
            ("passcode set", report.passcodeSet ? "yes" : "no"),
            ("cipher", report.cipher ?? "unknown (an older daemon)"),
            ("grace period", "\(report.grace.secondsRoundedUp) s"),
            ("auto-lock", report.autolock == .zero ? "off" : "after \(report.autolock.secondsRoundedUp) s without requests"),
            ("failed attempts", String(report.failedAttempts)),
        ]
        if let retry = report.retryAfterSeconds { rows.append(("next attempt", "in \(retry) s")) }
        if report.passcodeCountedByTPM == true { rows.append(("passcodes counted", "by the TPM")) }
        if let retry = report.tpmLockoutRetryAfterSeconds {
            rows.append(("TPM lockout", "too many wrong passcodes: the TPM refuses every one, the right one included; "
                         + "next attempt in at most \(retry) s"))
        }
        if let items = report.items { rows.append(("your items", String(items))) }
        let width = rows.map(\.0.count).max()! + 2
        return rows.map { label, value in
            (label + ":").padding(toLength: width, withPad: " ", startingAt: 0) + value + "\n"
        }.joined()
    }

    /// `alice (uid 1000)`, or the bare uid when no account has it.
    static func userName(_ uid: UInt32) -> String {
        accountName(of: uid).map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
    }
}
