import Foundation
import ProtfsControlProtocol
import Synchronization

/// The running monitors that post to `NotificationCenter.default`, by mount point. Only the
/// oldest of a mount posts, so that a program's own monitor and the one `SecItem*` start for
/// the keychain vault post each lock and unlock once, as UIKit does.
enum DefaultCenterPosters {
    private static let posters = Mutex<[String: [ObjectIdentifier]]>([:])

    static func register(_ monitor: ProtectedDataMonitor) {
        posters.withLock { $0[key(monitor), default: []].append(ObjectIdentifier(monitor)) }
    }

    static func unregister(_ monitor: ProtectedDataMonitor) {
        posters.withLock { posters in
            posters[key(monitor)]?.removeAll { $0 == ObjectIdentifier(monitor) }
            if posters[key(monitor)]?.isEmpty == true { posters[key(monitor)] = nil }
        }
    }

    static func mayPost(_ monitor: ProtectedDataMonitor) -> Bool {
        posters.withLock { $0[key(monitor)]?.first == ObjectIdentifier(monitor) }
    }

    private static func key(_ monitor: ProtectedDataMonitor) -> String {
        ControlSocketPath.canonicalMountpoint(monitor.mountpoint)
    }
}
