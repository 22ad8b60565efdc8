import CFuse
import ProtfsCore

/// The lock transition's hold on the kernel's page cache: for each selected node the kernel
/// knows, `fuse_lowlevel_notify_inval_inode(se, ino, 0, 0)` writes dirty pages back (as
/// ordinary write requests, served meanwhile by the loop's threads) and drops every page and
/// the cached attributes.
extension FuseAdapter: KernelPageCache {
    public func dropPages(where selected: (any CachedNode) -> Bool) {
        guard let session else { return }
        for (id, node) in inodes.snapshot() where selected(node) {
            // ENOENT: the kernel no longer knows the inode, so it caches nothing of it.
            _ = fuse_lowlevel_notify_inval_inode(session, id, 0, 0)
        }
    }
}
