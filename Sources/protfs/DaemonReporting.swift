import ProtfsCore
import ProtfsDomain
import ProtfsLog
import ProtfsSystemd

/// What the daemon tells about itself: its mount and every lock transition in its log, each
/// line with its kind of event; under systemd, the journal's structured fields
/// (docs/SYSTEMD.md) and the service manager's notifications (`READY=1`, `STATUS=` with the
/// lock state, `STOPPING=1`). The vault core knows none of this.
struct DaemonReporting {
    let log: DaemonLog
    let controller: LockController
    let mountpoint: String
    private let notifier: ServiceNotifier?

    init(log: DaemonLog, controller: LockController, mountpoint: String) {
        self.log = log
        self.controller = controller
        self.mountpoint = mountpoint
        notifier = ServiceNotifier.isUnderSystemd ? ServiceNotifier(mountpoint: mountpoint) : nil
        if notifier != nil && JournalEntry.isAvailable {
            log.sendStructured { [controller] priority, message, event in
                JournalEntry(priority: priority, message: message, event: event, mountpoint: mountpoint,
                             state: controller.state).send()
            }
        }
    }

    /// The mount is live: logged, and systemd told (the unit becomes active).
    func mounted(backing: String) {
        let state = controller.state
        log.info("serving \(backing) on \(mountpoint) (\(state.rawValue))", event: .mounted)
        notifier?.ready(state)
        controller.observeAutolock { [log, mountpoint, autolock = controller.autolock] idle in
            log.info("auto-lock of \(mountpoint): idle for \(idle.secondsRoundedUp) s (autolock=\(autolock.secondsRoundedUp))",
                     event: .autolock)
        }
        _ = controller.watch { [log, notifier, mountpoint] event in
            let state: LockState
            switch event {
            case .willBecomeUnavailable: state = .locking
            case .didBecomeUnavailable: state = .locked
            case .didBecomeAvailable: state = .unlocked
            }
            log.info("\(mountpoint) is \(state.rawValue)", event: DaemonEvent(state))
            notifier?.changed(to: state)
            return true
        }
    }

    func unmounting() { notifier?.stopping() }

    func unmounted() { log.info("unmounted \(mountpoint)", event: .unmounted) }
}

extension DaemonEvent {
    /// The event of entering `state`.
    init(_ state: LockState) {
        switch state {
        case .beforeFirstUnlock, .locked: self = .locked
        case .locking: self = .locking
        case .unlocked: self = .unlocked
        }
    }
}
