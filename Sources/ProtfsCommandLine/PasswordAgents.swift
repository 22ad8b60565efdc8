import Glibc
import ProtfsSystem

/// Whether asking the system's password agents (`systemd-ask-password`) can get an answer,
/// so that a command with no terminal and no input fails at once instead of waiting out
/// systemd-ask-password's 90 seconds. Where systemd is the service manager its agents are
/// there (the console and wall agents it starts); elsewhere an agent is a process watching
/// the question directory with inotify, as the agent protocol has them do, and the kernel
/// lists such watches in /proc/PID/fdinfo.
enum PasswordAgents {
    static let questionDirectory = "/run/systemd/ask-password"

    static var mayAnswer: Bool {
        // sd_booted(3): systemd runs as the service manager.
        if access("/run/systemd/system", F_OK) == 0 { return true }
        return someProcessWatches(questionDirectory)
    }

    /// A process whose inotify instance watches `path` (its inode on its device). Only the
    /// processes this user may inspect are seen: root's agents are visible to root.
    static func someProcessWatches(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, let proc = try? OwnedDescriptor.open(path: "/proc", [.directory, .readOnly]),
              let processes = try? proc.borrowed.entryNames() else { return false }
        let watch = " ino:\(String(st.st_ino, radix: 16)) sdev:\(String(kernelDeviceNumber(st.st_dev), radix: 16)) "
        return processes.lazy.filter { $0.allSatisfy(\.isNumber) }.contains { pid in
            guard let fds = try? OwnedDescriptor.open(path: "/proc/\(pid)/fd", [.directory, .readOnly]),
                  let names = try? fds.borrowed.entryNames() else { return false }
            return names.contains { fd in
                guard (try? fds.borrowed.readSymlink(fd)) == "anon_inode:inotify",
                      let info = try? OwnedDescriptor.open(path: "/proc/\(pid)/fdinfo/\(fd)", .readOnly),
                      let bytes = try? info.borrowed.readAll(limit: 1 << 20) else { return false }
                return String(decoding: bytes, as: UTF8.self).split(separator: "\n").contains { $0.contains(watch) }
            }
        }
    }

    /// The device number as the kernel prints it in fdinfo (`MAJOR << 20 | MINOR`), from the
    /// one stat(2) returns (glibc's encoding).
    static func kernelDeviceNumber(_ device: dev_t) -> UInt64 {
        let device = UInt64(device)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & 0xffff_f000)
        let minor = (device & 0xff) | ((device >> 12) & 0xffff_ff00)
        return major << 20 | minor
    }
}
