import Foundation
import ProtfsSystem

/// Where a path lies: on a protfs mount (which enforces classes) or elsewhere; the keychain
/// half of the library finds a vault's mount with it too.
package enum ProtfsLocation {
    /// The mount point of the protfs mount that holds `path` (which need not exist yet: its
    /// parent is resolved then), or nil when a mount of another type holds it.
    package static func mountpoint(holding path: String) -> String? {
        let canonical = CanonicalPath.bestEffort(path)
        guard let mount = MountTable.mount(holding: canonical), mount.isProtfs else { return nil }
        return mount.mountpoint
    }

    /// Whether a class asked for at `path` is to be applied (true), skipped (false, by the
    /// opt-in), or refused.
    static func classApplies(at path: String) throws(DataProtectionError) -> Bool {
        if mountpoint(holding: path) != nil { return true }
        switch outsideProtfsSetting.withLock({ $0 }) {
        case .ignore: return false
        case .fail: throw .notOnProtfs(path: path)
        }
    }
}
