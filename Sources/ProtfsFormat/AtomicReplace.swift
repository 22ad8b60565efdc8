import Glibc
import ProtfsSystem

extension FileDescriptor {
    /// Puts a small file named `name` in this directory with exactly `contents`, so that a
    /// crash leaves either the old file (or none) or the whole new one: written under a fresh
    /// `protfs.tmp.*` name (O_EXCL), synced, renamed over `name`, and, when `syncDirectory`,
    /// the directory synced so the rename itself is durable (keybag, metadata, state).
    /// Without it, whatever the caller creates next (the entry a sidecar names, the symlink a
    /// blob serves) is a later metadata change, which a journaling filesystem never makes
    /// durable before this rename. A temporary left by a crash is an orphan for fsck.
    package func writeFileAtomically(_ name: String, contents: [UInt8], mode: mode_t = 0o600,
                             syncDirectory: Bool = false) throws(Errno) {
        let temporary = ReservedNames.temporaryPrefix + ObjectID.random().description
        let created = try OwnedDescriptor.open(temporary, in: self, [.writeOnly, .create, .exclusive], mode: mode)
        do throws(Errno) {
            try created.closeAfter { file throws(Errno) in
                try file.changeMode(mode)  // exactly `mode`, whatever the umask
                try file.writeAll(contents)
                try file.sync()
            }
            try rename(temporary, to: self, name)
        } catch {
            try? removeFile(temporary)
            throw error
        }
        if syncDirectory { try self.syncDirectory() }
    }
}

extension FileDescriptor {
    /// Makes a symlink to `target` in this directory under a fresh temporary name, with the
    /// owner and times of `original` (the symlink it is to replace), and returns that name:
    /// a symlink's target cannot change in place, so a new one is renamed over the old.
    package func makeTemporarySymlink(to target: String, like original: stat) throws(Errno) -> String {
        let temporary = ReservedNames.temporaryPrefix + ObjectID.random().description
        try makeSymlink(temporary, target: target)
        do throws(Errno) {
            let object = try OwnedDescriptor.open(temporary, in: self, [.path])
            let made = object.borrowed
            let status = try made.status()
            if status.st_uid != original.st_uid || status.st_gid != original.st_gid {
                try made.changeOwner(uid: original.st_uid, gid: original.st_gid)
            }
            try made.setTimes(access: .at(seconds: original.st_atim.tv_sec, nanoseconds: original.st_atim.tv_nsec),
                              modification: .at(seconds: original.st_mtim.tv_sec, nanoseconds: original.st_mtim.tv_nsec))
        } catch {
            try? removeFile(temporary)
            throw error
        }
        return temporary
    }
}
