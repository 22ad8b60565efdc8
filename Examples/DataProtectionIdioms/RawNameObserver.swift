import DataProtection
import Foundation

/// `DataProtectionIdioms --raw-observer`: an observer registered by the notification's raw
/// name, as code that spells UIKit's string writes it, with no library name in sight but a
/// `SecItem` call; it exits 0 once the observer fired for a lock.
enum RawNameObserver {
    static func run() -> Int32 {
        let willLock = DispatchSemaphore(value: 0)
        let name = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
        let observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in
            print("raw-name observer: \(name.rawValue)")
            willLock.signal()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let status = SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword] as CFDictionary, nil)
        print("SecItemCopyMatching: \(status)")
        print("ready")
        guard willLock.wait(timeout: .now() + 60) == .success else {
            print("no notification within 60 s")
            return 1
        }
        return 0
    }
}
