import Synchronization

/// What asking for a protection class outside a protfs mount does.
public enum OutsideProtfs: Sendable {
    /// Throw `DataProtectionError.notOnProtfs` (the default): code that asks for protection
    /// learns that it has none.
    case fail
    /// Write or create as asked, without a class: for code that runs both on and off protfs
    /// and accepts that off it nothing is protected.
    case ignore
}

/// The process-wide choice, behind a lock: any thread may read or set it.
let outsideProtfsSetting = Mutex(OutsideProtfs.fail)
