import Glibc
import ProtfsCommandLine
import ProtfsDomain
import ProtfsSystem

/// `protfsctl class get PATH...` and `protfsctl class set [-R] CLASS PATH...`: through the
/// `user.protfs.class` attribute, so the mount's own rules (and POSIX permissions) apply
/// exactly as for `getfattr`/`setfattr`. Only on a protfs mount: elsewhere that attribute is
/// an ordinary one any filesystem keeps, and setting it there once "succeeded", after which
/// `class get` reported `complete` for a plaintext file; such a path is refused (exit 9).
enum ClassCommands {
    static let attribute = "user.protfs.class"

    static let get = Command(name: "class get", synopsis: "PATH...") { arguments in
        let paths = try arguments.variadicOperands("PATH")
        var failures = FailureTally(single: paths.count == 1)
        for path in paths {
            do throws(Errno) {
                let object = try OwnedDescriptor.open(path: path, .path)
                guard try isOnProtfs(object.borrowed) else {
                    failures.reportOutsideProtfs("class get", path)
                    continue
                }
                let value = String(decoding: try object.borrowed.extendedAttribute(attribute), as: UTF8.self)
                writeOutput(paths.count == 1 ? "\(value)\n" : "\(value)\t\(path)\n")
            } catch {
                failures.report("class get", path, error, reading: true)
            }
        }
        try failures.finish()
    }

    static let set = Command(name: "class set", synopsis: "[-R [--progress | --json]] CLASS PATH...",
                             flags: ProgressMeter.flags.union(["-R"])) { arguments in
        let operands = try arguments.variadicOperands("CLASS", "PATH")
        guard let protectionClass = ProtectionClass(spelling: operands[0]) else {
            let names = ProtectionClass.allCases.map(\.name).joined(separator: ", ")
            throw UsageError("unknown class '\(operands[0])'; use one of \(names), their NSFileProtection names, or A-D")
        }
        let recursive = arguments.isSet("-R")
        var failures = FailureTally(single: operands.count == 2 && !recursive)
        let style = recursive ? ProgressMeter.Style(arguments) : .none
        let tally = ObjectTally(ProgressMeter(command: "protfsctl class set", style: style, total: style == .none ? nil
                                              : .init(objects: operands.dropFirst().reduce(0) { $0 + TreeTally(path: $1).objects })))
        defer { tally.finish() }
        for path in operands.dropFirst() {
            do throws(Errno) {
                // The operand itself is followed like setfattr does; nothing below it is.
                let object = try OwnedDescriptor.open(path: path, .path)
                guard try isOnProtfs(object.borrowed) else {
                    failures.reportOutsideProtfs("class set", path)
                    continue
                }
                setClass(protectionClass, of: object.borrowed, path: path, recursive: recursive, tally: tally, failures: &failures)
            } catch {
                failures.report("class set", path, error, reading: false)
            }
        }
        try failures.finish()
    }

    private static func isOnProtfs(_ object: FileDescriptor) throws(Errno) -> Bool {
        MountTable.isOnProtfsMount(device: try object.status().st_dev)
    }

    /// Sets the class of a regular file or directory, then, with -R, of everything below a
    /// directory; symlinks and other nodes have no class and are passed over.
    private static func setClass(_ protectionClass: ProtectionClass, of object: FileDescriptor, path: String,
                                 recursive: Bool, tally: ObjectTally, failures: inout FailureTally) {
        do throws(Errno) {
            let st = try object.status()
            // Below an operand: a mount of another filesystem inside the vault is passed over.
            guard MountTable.isOnProtfsMount(device: st.st_dev) else {
                failures.reportOutsideProtfs("class set", path)
                return
            }
            guard st.isRegularFile || st.isDirectory else {
                if !recursive { throw Errno.noData }
                return
            }
            defer { tally.count(st) }
            do {
                try object.setExtendedAttribute(attribute, Array(protectionClass.name.utf8))
            } catch {
                failures.report("class set", path, error, reading: false)
            }
            guard recursive, st.isDirectory else { return }
            for name in try object.entryNames().sorted() {
                let childPath = path.hasSuffix("/") ? path + name : path + "/" + name
                do throws(Errno) {
                    let child = try OwnedDescriptor.open(name, in: object, .path)  // O_NOFOLLOW: a symlink is the link
                    setClass(protectionClass, of: child.borrowed, path: childPath, recursive: true, tally: tally, failures: &failures)
                } catch {
                    failures.report("class set", childPath, error, reading: false)
                }
            }
        } catch {
            failures.report("class set", path, error, reading: false)
        }
    }
}

/// Per-path failures: each is reported on stderr and the command goes on. The exit code is
/// that of the failure for a single path, 1 when any of several failed; 9 when every failure
/// was a path outside every protfs mount.
struct FailureTally {
    let single: Bool
    private var code: ExitCode?
    private var onlyOutsideProtfs = true

    init(single: Bool) { self.single = single }

    mutating func report(_ command: String, _ path: String, _ error: Errno, reading: Bool) {
        writeError("protfsctl \(command): \(path): \(Self.explain(error, reading: reading))\n")
        code = single ? (error == .noEntry ? .notFound : .failure) : .failure
        onlyOutsideProtfs = false
    }

    mutating func reportOutsideProtfs(_ command: String, _ path: String) {
        writeError("protfsctl \(command): \(path): is not on a protfs mount, so it has no protection class; "
                   + "nothing was \(command == "class set" ? "changed" : "read")\n")
        code = code == nil ? .notOnProtfs : .failure
    }

    func finish() throws(CommandExit) {
        guard let code else { return }
        throw CommandExit(code: onlyOutsideProtfs ? .notOnProtfs : code)
    }

    private static func explain(_ error: Errno, reading: Bool) -> String {
        switch error {
        case .noEntry: "no such file or directory"
        case .noData, .notSupported:
            "has no protection class: only regular files and directories on a protfs mount have one"
        case .permissionDenied where !reading:
            "permission denied: changing a file's class needs write permission and both classes' keys "
                + "(unlock the vault with 'protfsctl unlock MOUNTPOINT' and try again)"
        case .notPermitted: "operation not permitted: only the owner (or root) may change a class"
        default: "\(error)"
        }
    }
}

/// The files and directories `class set -R` has been through, for its progress: objects
/// only, since a re-class rewraps file keys and reads no contents.
private final class ObjectTally {
    let meter: ProgressMeter
    var objects: UInt64 = 0

    init(_ meter: ProgressMeter) { self.meter = meter }

    func count(_ status: stat) {
        objects += 1
        meter.update(objects: objects, bytes: 0)
    }

    func finish() { meter.finish(objects: objects, bytes: 0) }
}
