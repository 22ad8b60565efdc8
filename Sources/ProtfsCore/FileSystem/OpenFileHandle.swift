import Glibc
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// The decrypted-content state of one regular file while handles are open on it: one
/// backing descriptor and one per-file key shared by every handle, dropped with the last.
final class OpenContent: Sendable {
    struct State {
        var file: EncryptedFile?
        var handles = 0
    }
    let state = Mutex(State())
}

/// An open regular file on the mount (a FUSE `fh`).
public final class OpenFileHandle: Sendable {
    public let node: BackingNode
    public let writable: Bool

    init(node: BackingNode, writable: Bool) {
        self.node = node
        self.writable = writable
    }

    /// The file's class now (a re-class while open applies to later requests too).
    public var protectionClass: ProtectionClass { node.cachedHeader?.protectionClass ?? .complete }

}

extension BackingNode: CachedNode {
    /// True while any handle is open on this file.
    public var hasOpenHandles: Bool { content.state.withLock { $0.handles > 0 } }

    public var cachedProtectionClass: ProtectionClass? { cachedHeader?.protectionClass }
}
