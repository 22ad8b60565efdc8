import Glibc
import ProtfsCommandLine
import ProtfsCore
import ProtfsFuse
import ProtfsSystem

/// `protfs mount BACKING MOUNTPOINT [-f] [-o OPTIONS]`, parsed. Our options are taken out of
/// the `-o` lists; whatever else is there is libfuse's own and passed through.
struct MountOptions {
    var backing = ""
    var mountpoint = ""
    var foreground = false
    var deviceKey: String?
    /// `tpm2_tcti=`: the TPM holding a sealed device key (docs/OPERATIONS.md).
    var tpmTCTI: String?
    var passcodeFile: String?
    var passcodeCommand: String?
    /// `ask_passcode`: on the terminal, else through the system's password agents.
    var askPasscode = false
    var grace = Duration.seconds(10)
    /// Zero: no auto-lock.
    var autolock = Duration.zero
    var readOnly = false
    var allowOther = false
    var nonempty = false
    var debug = false
    /// `idle_poll` / `noidle_poll` (the default; see `PollingHold`).
    var idlePolling = false
    /// `io_uring` / `noio_uring` (the default): FUSE over io_uring when the kernel offers it.
    var ioUring = false
    /// `noatime` / `atime` and `nodiratime` / `diratime`; `relatime` otherwise, as on Linux.
    var noAccessTimes = false
    var noDirectoryAccessTimes = false
    var fuseOptions: [String] = []
    /// `owner=USER|UID`: who may lock, unlock and change the passcode besides root; by
    /// default the user who mounts.
    var owner = getuid()
    /// `remount`: change `ro`/`rw` of the live mount (`Remount`), nothing else.
    var remount = false
    /// protfs's own options that were given, by name, of those a remount cannot change.
    var givenOwnOptions: [String] = []
    static let fixedOnceRunning: Set = ["device_key", "tpm2_tcti", "passcode_file", "grace", "autolock", "allow_other", "nonempty",
                                        "debug", "idle_poll", "noidle_poll", "io_uring", "noio_uring", "owner",
                                        "passcode_command", "ask_passcode"]

    /// What completion offers after `-o`: protfs's own options (`=`: a value follows), then
    /// the kernel's that a FUSE mount honours.
    static let offered = ["allow_other", "ask_passcode", "autolock=", "debug", "device_key=", "grace=", "idle_poll",
                          "io_uring", "nonempty", "owner=", "passcode_command=", "passcode_file=", "remount",
                          "ro", "rw", "noatime", "nodiratime", "relatime", "noexec", "nodev", "sync", "dirsync"]

    /// The longest `grace` and `autolock`: a day. Longer is a mistake (a lock that never
    /// comes), and the timers must not overflow.
    static let maximumSeconds = 86_400

    init(backing: String, mountpoint: String, foreground: Bool, optionList: String?) throws {
        self.backing = backing
        self.mountpoint = mountpoint
        self.foreground = foreground
        if let optionList { try apply(optionList: optionList) }
    }

    private mutating func apply(optionList: String) throws(UsageError) {
        for option in optionList.split(separator: ",", omittingEmptySubsequences: true).map(String.init) {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts[0]
            let value = parts.count > 1 ? parts[1] : nil
            func required() throws(UsageError) -> String {
                guard let value, !value.isEmpty else { throw UsageError("option '\(name)' needs a value (\(name)=...)") }
                return value
            }
            func seconds() throws(UsageError) -> Duration {
                guard let n = Int(try required()), (0...Self.maximumSeconds).contains(n) else {
                    throw UsageError("option '\(name)' takes whole seconds from 0 to \(Self.maximumSeconds) (a day), "
                                     + "not '\(value ?? "")'")
                }
                return .seconds(n)
            }
            if Self.fixedOnceRunning.contains(name) { givenOwnOptions.append(name) }
            switch name {
            case "remount": remount = true
            // Absolute now: the daemon works from `/` once it detaches, and a relative device key
            // once put the vault's state lock (`vaults/ID.lock` beside it) in `/`.
            case "device_key": deviceKey = CanonicalPath.bestEffort(try required())
            case "tpm2_tcti": tpmTCTI = try required()
            case "passcode_file": passcodeFile = CanonicalPath.bestEffort(try required())
            case "owner": owner = try Self.owner(named: try required())
            case "passcode_command": passcodeCommand = try required()
            case "ask_passcode": askPasscode = true
            case "grace": grace = try seconds()
            case "autolock": autolock = try seconds()
            case "ro": readOnly = true
            case "rw": readOnly = false
            case "allow_other": allowOther = true
            case "nonempty": nonempty = true
            case "debug": debug = true
            case "idle_poll": idlePolling = true
            case "noidle_poll": idlePolling = false
            case "io_uring": ioUring = true
            case "noio_uring": ioUring = false
            // Kept for libfuse too, so that the kernel's mount shows the choice.
            case "noatime", "atime": noAccessTimes = name == "noatime"; fuseOptions.append(option)
            case "nodiratime", "diratime": noDirectoryAccessTimes = name == "nodiratime"
            case "relatime", "norelatime": break
            case "strictatime":
                throw UsageError("option 'strictatime' cannot be honoured: reads served from the kernel's page cache never "
                                 + "reach protfs; use relatime (the default) or noatime")
            case "suid":
                throw UsageError("option 'suid' cannot be honoured: a protfs mount is always nosuid, since whoever can "
                                 + "write the backing directory could plant a set-user-ID program there; remove 'suid'")
            case "dev":
                throw UsageError("option 'dev' cannot be honoured: a protfs mount is always nodev, since whoever can write "
                                 + "the backing directory could plant a device node there; remove 'dev'")
            case "lazytime":
                throw UsageError("option 'lazytime' cannot be honoured: FUSE keeps no time updates back, each change "
                                 + "reaches protfs as it happens; remove 'lazytime'")
            case "nolazytime": break  // what a FUSE mount does anyway
            case "auto_unmount":
                throw UsageError("option 'auto_unmount' cannot be honoured: when a protfs daemon dies its mount stays and "
                                 + "answers ENOTCONN, so that nothing written there lands in plaintext on the directory "
                                 + "underneath; remove 'auto_unmount' (the next mount clears the dead one)")
            case "default_permissions", "subtype", "fsname":
                break  // always set by protfs itself
            default: fuseOptions.append(option)
            }
        }
    }

    /// The uid of `owner=`: a user name, or a number. Only root may name another user: a
    /// user's daemon serves its socket from that user's own runtime directory, where nobody
    /// else looks, and must not lock its own user out.
    private static func owner(named name: String) throws(UsageError) -> uid_t {
        let uid: uid_t
        if let number = UInt32(name), number != UInt32.max {
            uid = number
        } else if let entry = getpwnam(name) {
            uid = entry.pointee.pw_uid
        } else {
            throw UsageError("option 'owner' names no user: '\(name)' is neither a user name nor a uid")
        }
        guard uid == getuid() || getuid() == 0 else {
            throw UsageError("option 'owner=\(name)': only root may mount a vault for another owner")
        }
        return uid
    }

    var accessTimes: AccessTimeUpdates {
        noAccessTimes ? .never : AccessTimeUpdates(files: true, directories: !noDirectoryAccessTimes)
    }

    var configuration: MountConfiguration {
        var configuration = MountConfiguration(backing: backing, mountpoint: mountpoint)
        configuration.foreground = foreground
        configuration.allowOther = allowOther
        configuration.readOnly = readOnly
        configuration.debugRequests = debug
        configuration.fuseOptions = fuseOptions
        return configuration
    }
}
