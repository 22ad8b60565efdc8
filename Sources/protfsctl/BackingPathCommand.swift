import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsSystem

/// `protfsctl backing-path PATH`: the backing object of PATH (itself, not a symlink's
/// target), relative to the backing directory. The protfs mount holding PATH is the
/// longest protfs mount point that prefixes it in /proc/mounts; its daemon translates the
/// names.
enum BackingPathCommand {
    static let command = Command(name: "backing-path", synopsis: "PATH") { arguments in
        let path = try arguments.operands("PATH")[0]
        guard let absolute = CanonicalPath.resolvingParent(path) else {
            let error = Errno.current
            throw ControlFailure(error == .noEntry ? .notFound : .failure, "cannot resolve the directory of \(path): \(error)")
        }
        guard let mountpoint = MountTable.protfsMountPoint(containing: absolute) else {
            throw ControlFailure(.notFound, "\(path) is not on a protfs mount")
        }
        let components = absolute.dropFirst(mountpoint.count).split(separator: "/").map { Array($0.utf8) }
        let client = try ControlClient(mountpoint: mountpoint)
        let reply = try client.send(.backingPath(components))
        guard case .backingPath(let backingPath) = reply else { throw client.unexpected(reply) }
        writeOutput(backingPath + "\n")
    }
}
