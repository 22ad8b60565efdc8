/// An object's identity on the backing filesystem: hard links share it. What the snapshot
/// gate's stripes, the filesystem's nodes and a backup's hard links are keyed by.
public struct BackingIdentity: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    /// Which of `count` striped locks guards this object.
    func stripe(among count: Int) -> Int {
        Int((inode ^ device &* 0x9E37_79B9_7F4A_7C15) % UInt64(count))
    }
}
