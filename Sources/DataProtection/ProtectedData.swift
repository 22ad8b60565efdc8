import DataProtectionFiles
import ProtfsControlProtocol
import ProtfsDomain

/// The availability of protected data on a protfs mount, as UIKit's
/// `UIApplication.isProtectedDataAvailable` reports it for an iPhone.
public enum ProtectedData {
    /// Whether `complete` files on the mount at `mountpoint` (or holding that path) can be
    /// read now: the vault is unlocked, or locking and still in its grace period. Asks the
    /// mount's daemon over its control socket (`status`, open to every user); throws when no
    /// daemon serves it.
    public static func isProtectedDataAvailable(mountpoint path: String) throws -> Bool {
        let mountpoint = ProtfsLocation.mountpoint(holding: path) ?? path
        let reply: ControlReply
        do {
            reply = try ControlClient(mountpoint: mountpoint).send(.status)
        } catch {
            throw DataProtectionError.noDaemon(error.message)
        }
        guard case .status(let report) = reply else {
            throw DataProtectionError.noDaemon("the protfs daemon of \(mountpoint) did not answer with its status")
        }
        return isAvailable(report.state)
    }

    static func isAvailable(_ state: LockState) -> Bool {
        state == .unlocked || state == .locking
    }
}
