import ProtfsControlProtocol
import ProtfsSystem

/// What a live mount's daemon runs with: the `-o` list on its command line, and its grace
/// and autolock now (`protfsctl` may have changed them since). A remount compares what it is
/// given with these, so one that repeats the options in force (from fstab, say) says nothing.
struct RunningMountOptions {
    let options: MountOptions
    let grace: Duration
    let autolock: Duration

    /// Asks the daemon of `mountpoint` (nil if it does not answer, or its command line cannot
    /// be read: then every option given counts as a change).
    init?(mountpoint: String) {
        // A remount is root's: the daemon tells root its pid and backing directory.
        guard let client = try? ControlClient(mountpoint: mountpoint), case .status(let report)? = try? client.send(.status),
              let pid = report.pid, let backing = report.backing,
              let file = try? OwnedDescriptor.open(path: "/proc/\(pid)/cmdline", [.readOnly]),
              let commandLine = try? file.borrowed.readAll(limit: 1 << 20) else { return nil }
        let arguments = commandLine.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let list = arguments.firstIndex(of: "-o").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        guard let options = try? MountOptions(backing: backing, mountpoint: mountpoint, foreground: false,
                                              optionList: list) else { return nil }
        self.options = options
        grace = report.grace
        autolock = report.autolock
    }

    /// The options in `given` that a remount cannot change and that differ from these; a
    /// kernel flag is in force when the live mount shows it (`live`, `MountTable.options`).
    func differing(in given: MountOptions, live: Set<String>) -> [String] {
        let own = given.givenOwnOptions.filter { name in
            switch name {
            case "device_key": given.deviceKey != options.deviceKey
            case "tpm2_tcti": given.tpmTCTI != options.tpmTCTI
            case "passcode_file": given.passcodeFile != options.passcodeFile
            case "grace": given.grace != grace
            case "autolock": given.autolock != autolock
            case "allow_other": !options.allowOther
            case "nonempty": !options.nonempty
            case "debug": !options.debug
            case "idle_poll", "noidle_poll": given.idlePolling != options.idlePolling
            case "io_uring", "noio_uring": given.ioUring != options.ioUring
            default: true
            }
        }
        return own + given.fuseOptions.filter { !options.fuseOptions.contains($0) && !Self.isInForce($0, live: live) }
    }

    /// Whether the kernel flag `option` holds for a mount that shows `live`.
    static func isInForce(_ option: String, live: Set<String>) -> Bool {
        switch option {
        case "exec": !live.contains("noexec")
        case "async": !live.contains("sync")
        case "nosuid", "nodev", "noexec", "sync", "dirsync": live.contains(option)
        default: false
        }
    }
}
