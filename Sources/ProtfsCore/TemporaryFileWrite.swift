import Glibc
import ProtfsSystem

extension FileDescriptor {
    /// Puts a small file named `name` in this directory with exactly `contents`, so that a
    /// crash leaves either no file or the whole one: written under a fresh `protfs.tmp.*`
    /// name (O_EXCL), synced, then renamed over `name`. A temporary file left by a crash is
    /// only ever an orphan for fsck. The directory is not synced here: whatever the caller
    /// creates next (the entry a sidecar names, the symlink a blob serves) is a later
    /// metadata change, which a journaling filesystem never makes durable before this rename.
    func writeFileAtomically(_ name: String, contents: [UInt8], mode: mode_t = 0o600) throws(Errno) {
        let temporary = ReservedNames.temporaryPrefix + ObjectID.random().description
        let file = try FileDescriptor.open(temporary, in: self, [.writeOnly, .create, .exclusive], mode: mode)
        do throws(Errno) {
            defer { file.close() }
            try file.writeAll(contents)
            try file.sync()
        } catch {
            try? removeFile(temporary)
            throw error
        }
        do throws(Errno) {
            try rename(temporary, to: self, name)
        } catch {
            try? removeFile(temporary)
            throw error
        }
    }
}
