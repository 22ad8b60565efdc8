import Foundation
import Synchronization

/// UIKit's names for protected data, so that iOS code using them compiles and works
/// unchanged: `UIApplication.shared.isProtectedDataAvailable` and the two notifications,
/// for the keychain vault (found as `SecItem*` find it: `ProtfsKeychain.mountpoint`,
/// `PROTFS_KEYCHAIN`, `~/.config/protfs/keychain`, else the caller's only vault).
///
/// The notifications are posted to `NotificationCenter.default` without the program creating
/// anything: naming either one (as an observer does), or the first `SecItem*` call that finds
/// the keychain vault (for observers registered by the notification's raw name), starts
/// following the keychain vault's daemon. Its object is the `ProtectedDataMonitor` that follows the vault. When the vault is
/// unmounted, they are posted as for a lock.
public final class UIApplication: Sendable {
    /// The one application object, as in UIKit.
    public static let shared = UIApplication()

    private init() {}

    /// Whether `complete` data of the keychain vault can be read now: unlocked, or locking
    /// and within the grace period. False when there is no keychain vault or its daemon does
    /// not answer (with why on standard error, once).
    public var isProtectedDataAvailable: Bool {
        if let monitor = KeychainVaultMonitor.running(), monitor.hasState { return monitor.isProtectedDataAvailable }
        switch KeychainVault.choice() {
        case .found(let mountpoint):
            do {
                return try ProtectedData.isProtectedDataAvailable(mountpoint: mountpoint)
            } catch {
                DataProtectionDiagnostics.report("\(error)")
                return false
            }
        case .none(let reason):
            DataProtectionDiagnostics.report(reason)
            return false
        }
    }

    /// Posted when the keychain vault starts to lock (or is unmounted): close `complete` files.
    public static var protectedDataWillBecomeUnavailableNotification: Notification.Name {
        KeychainVaultMonitor.start()
        return .protectedDataWillBecomeUnavailable
    }

    /// Posted when the keychain vault is unlocked.
    public static var protectedDataDidBecomeAvailableNotification: Notification.Name {
        KeychainVaultMonitor.start()
        return .protectedDataDidBecomeAvailable
    }
}

extension NSNotification.Name {
    /// The older spelling of `UIApplication.protectedDataWillBecomeUnavailableNotification`.
    public static var UIApplicationProtectedDataWillBecomeUnavailable: NSNotification.Name {
        UIApplication.protectedDataWillBecomeUnavailableNotification
    }

    /// The older spelling of `UIApplication.protectedDataDidBecomeAvailableNotification`.
    public static var UIApplicationProtectedDataDidBecomeAvailable: NSNotification.Name {
        UIApplication.protectedDataDidBecomeAvailableNotification
    }
}

/// The process's monitor of the keychain vault, started on first need and kept for the
/// process's life (as UIKit posts its notifications for the app's whole life).
enum KeychainVaultMonitor {
    private static let monitor = Mutex<ProtectedDataMonitor?>(nil)

    static func running() -> ProtectedDataMonitor? { monitor.withLock { $0 } }

    /// Starts following the keychain vault (`mountpoint` when the caller has just found it)
    /// unless already following it; without a keychain vault it tries again at the next call.
    static func start(following found: String? = nil) {
        guard running() == nil else { return }
        let mountpoint: String
        if let found {
            mountpoint = found
        } else {
            guard case .found(let chosen) = KeychainVault.choice() else { return }
            mountpoint = chosen
        }
        // Created outside the lock: its init waits for the daemon's first answer.
        let created = ProtectedDataMonitor(mountpoint: mountpoint)
        let kept = monitor.withLock { current in
            if current == nil { current = created }
            return current === created
        }
        if !kept { created.stop() }
    }
}
