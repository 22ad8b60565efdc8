import Glibc
import ProtfsSystem

extension SymlinkTarget {
    /// Rewrites the backing symlink `name` in `parent` (format 1 or 2) in format 3 for
    /// `location`: a symlink's target cannot change in place, so a new one with the same
    /// target, owner and times is made under a `protfs.tmp.*` name and renamed over it; then
    /// the former out-of-line target goes, unless another name (a hard link made by an older
    /// build: `status.st_nlink`) still uses it. Returns the new backing target.
    public static func upgrade(_ name: String, in parent: FileDescriptor, status: stat, target: [UInt8],
                               at location: SymlinkLocation, formerTarget: String, keys: FilesystemKeys,
                               root: FileDescriptor) throws(Errno) -> String {
        let newTarget = try store(target: target, at: location, keys: keys, root: root)
        do throws(Errno) {
            let temporary = try parent.makeTemporarySymlink(to: newTarget, like: status)
            do throws(Errno) {
                try parent.rename(temporary, to: parent, name)
            } catch {
                try? parent.removeFile(temporary)
                throw error
            }
        } catch {
            removeBlob(backingTarget: newTarget, root: root)
            throw error
        }
        if status.st_nlink == 1 { removeBlob(backingTarget: formerTarget, root: root) }
        return newTarget
    }
}
