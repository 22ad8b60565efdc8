import Glibc
import ProtfsCore
import ProtfsSystem

/// What `protfs mount` checks before it touches the vault: where it mounts, and what is
/// already there.
enum MountPointChecks {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    static func canonical(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The protfs mounts listed in /proc/mounts, by mount point (octal escapes decoded).
    static func protfsMounts() -> Set<String> {
        guard let fd = try? FileDescriptor.open(path: "/proc/mounts", .readOnly),
              let bytes = try? fd.readAll() else { return [] }
        fd.close()
        var result: Set<String> = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[2] == "fuse.protfs" else { continue }
            result.insert(unescapeMountField(String(fields[1])))
        }
        return result
    }

    static func unescapeMountField(_ field: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4,
               let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Clears a protfs mount whose daemon died (the kernel answers ENOTCONN), so the mount
    /// point can be used again; refuses a live one.
    static func clearDeadMount(at mountpoint: String) throws(Refusal) {
        guard protfsMounts().contains(mountpoint) else { return }
        var st = stat()
        if stat(mountpoint, &st) == 0 {
            throw Refusal(description: "\(mountpoint) is already a protfs mount; unmount it first (fusermount3 -u \(mountpoint))")
        }
        guard Errno.current == Errno(ENOTCONN) else { return }
        if umount2(mountpoint, Int32(MNT_DETACH)) != 0 {
            let status = runQuietly("/bin/fusermount3", ["-u", "-z", mountpoint])
            if status != 0 {
                throw Refusal(description: "\(mountpoint) holds the dead mount of a crashed protfs daemon and it could not be cleared")
            }
        }
    }

    /// Refuses a mount point inside the backing directory or the reverse, a missing or
    /// non-directory one, and a non-empty one unless `nonempty`.
    static func check(backing: String, mountpoint: String, nonempty: Bool) throws(Refusal) {
        if backing == mountpoint || mountpoint.hasPrefix(backing + "/") || backing.hasPrefix(mountpoint + "/") {
            throw Refusal(description: "the mount point and the backing directory must not contain each other (\(mountpoint), \(backing))")
        }
        let dir: FileDescriptor
        do {
            dir = try FileDescriptor.open(path: mountpoint, [.readOnly, .directory])
        } catch {
            throw Refusal(description: "mount point \(mountpoint) is not a directory you can use (\(error))")
        }
        defer { dir.close() }
        if !nonempty, let names = try? dir.entryNames(), !names.isEmpty {
            throw Refusal(description: "mount point \(mountpoint) is not empty; empty it or mount with -o nonempty")
        }
    }

    static func runQuietly(_ program: String, _ arguments: [String]) -> Int32 {
        var pid: pid_t = 0
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, program, nil, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && Errno.current == .interrupted {}
        return status
    }
}
