import Foundation
import ProtfsDomain

/// A change in the availability of protected data, after UIKit's notifications.
public enum ProtectedDataEvent: String, Sendable, CaseIterable {
    /// A lock started: `complete` data stays readable for the grace period only. Close
    /// `complete` files now (UIKit's `protectedDataWillBecomeUnavailable`).
    case willBecomeUnavailable
    /// The grace period ended: `complete` data is unreadable (protfs's own; UIKit has no
    /// counterpart).
    case didBecomeUnavailable
    /// The passcode was entered (UIKit's `protectedDataDidBecomeAvailable`).
    case didBecomeAvailable

    /// The notification posted for this event.
    public var notificationName: Notification.Name {
        switch self {
        case .willBecomeUnavailable: .protectedDataWillBecomeUnavailable
        case .didBecomeUnavailable: .protectedDataDidBecomeUnavailable
        case .didBecomeAvailable: .protectedDataDidBecomeAvailable
        }
    }

    init(_ event: LockEvent) {
        switch event {
        case .willBecomeUnavailable: self = .willBecomeUnavailable
        case .didBecomeUnavailable: self = .didBecomeUnavailable
        case .didBecomeAvailable: self = .didBecomeAvailable
        }
    }

    /// The state an event leaves the vault in.
    var resultingState: LockState {
        switch self {
        case .willBecomeUnavailable: .locking
        case .didBecomeUnavailable: .locked
        case .didBecomeAvailable: .unlocked
        }
    }

    /// The events that lead from `old` to `new`: what a watcher missed while it was not
    /// connected (a daemon restart, say), in the order the daemon would have sent them.
    static func missed(from old: LockState?, to new: LockState) -> [ProtectedDataEvent] {
        guard let old, old != new else { return [] }
        switch (old, new) {
        case (.unlocked, .locking): return [.willBecomeUnavailable]
        case (.unlocked, .locked), (.unlocked, .beforeFirstUnlock): return [.willBecomeUnavailable, .didBecomeUnavailable]
        case (.locking, .locked), (.locking, .beforeFirstUnlock): return [.didBecomeUnavailable]
        case (_, .unlocked): return [.didBecomeAvailable]
        case (.locked, .locking), (.beforeFirstUnlock, .locking): return [.didBecomeAvailable, .willBecomeUnavailable]
        default: return []  // from one unavailable state to the other
        }
    }
}

extension Notification.Name {
    /// Posted when a lock starts; UIKit's name, so observers written for iOS match it.
    public static let protectedDataWillBecomeUnavailable = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
    /// Posted when the lock's grace period ends and `complete` data becomes unreadable.
    public static let protectedDataDidBecomeUnavailable = Notification.Name("ProtfsProtectedDataDidBecomeUnavailable")
    /// Posted on unlock; UIKit's name.
    public static let protectedDataDidBecomeAvailable = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
}
