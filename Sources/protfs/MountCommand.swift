import Glibc
import CProtfsSys
import ProtfsControl
import ProtfsCore
import ProtfsCrypto
import ProtfsFuse
import ProtfsSystem

/// `protfs mount`: checks, opens the vault (and unlocks it when given `passcode_file`),
/// mounts, detaches unless `-f`, and serves until unmounted or SIGTERM.
enum MountCommand {
    static let command = Command(name: "mount", synopsis: "BACKING MOUNTPOINT [-f] [-o OPTIONS]",
                                 valueOptions: ["-o"], flags: ["-f"], run: { arguments in
        let operands = try arguments.operands("BACKING", "MOUNTPOINT")
        let options = try MountOptions(backing: operands[0], mountpoint: operands[1], foreground: arguments.isSet("-f"),
                                       optionList: arguments.value("-o"))
        let status = serve(options)
        if status != .success { throw CommandExit(code: status) }
    })

    static func serve(_ options: MountOptions) -> ExitCode {
        guard let backing = MountPointChecks.canonical(options.backing) else {
            report("backing directory \(options.backing) does not exist")
            return .notFound
        }
        guard let mountpoint = MountPointChecks.canonical(options.mountpoint) else {
            report("mount point \(options.mountpoint) does not exist")
            return .notFound
        }
        do {
            try MountPointChecks.clearDeadMount(at: mountpoint)
            try MountPointChecks.check(backing: backing, mountpoint: mountpoint, nonempty: options.nonempty)
        } catch {
            report(error.description)
            return .failure
        }
        DaemonHardening.apply()

        let vault: Vault
        do {
            vault = try Vault.open(backing: backing, deviceKeyPath: options.deviceKey)
            for warning in vault.warnings { report("warning: \(warning)") }
            if let passcodeFile = options.passcodeFile {
                let passcode = try PasscodeReader(passcodeFile: passcodeFile).read()
                try vault.unlock(passcode: passcode)
            }
        } catch {
            report(error.description)
            return error.exitCode
        }

        let log = DaemonLog(debug: options.debug)
        let controller = LockController(vault: vault, initialState: options.passcodeFile == nil ? .beforeFirstUnlock : .unlocked,
                                        grace: options.grace, autolock: options.autolock)
        var configuration = options.configuration
        configuration.backing = backing
        configuration.mountpoint = mountpoint
        let session: FuseSession
        let fileSystem: VaultFileSystem
        let adapter: FuseAdapter
        do {
            fileSystem = try VaultFileSystem(vault: vault, controller: controller)
            adapter = FuseAdapter(fileSystem: fileSystem, log: log)
            session = try FuseSession(adapter: adapter, configuration: configuration)
        } catch let error as FuseSessionError {
            report("\(error)" + (options.fuseOptions.isEmpty ? "" : " (options passed to libfuse: \(options.fuseOptions.joined(separator: ",")))"))
            return .failure
        } catch {
            report("cannot serve the vault at \(backing): \(error)")
            return .failure
        }
        guard session.daemonize(foreground: options.foreground) else {
            report("could not detach from the terminal")
            return .failure
        }
        if !options.foreground { log.detach() }
        // Threads start only now: none would survive the fork into the background.
        controller.attach(fileSystem: fileSystem, cache: adapter)
        log.info("serving \(backing) on \(mountpoint)")
        _ = session.serve(maxThreads: configuration.maxThreads)
        log.info("unmounted \(mountpoint)")
        return .success
    }
}

/// Messages of the mount command, which reports its own failures before choosing an exit code.
private func report(_ message: String) { writeError("protfs mount: \(message)\n") }

/// The daemon is not dumpable and writes no core: its memory holds keys and plaintext.
enum DaemonHardening {
    static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = protfs_set_undumpable()
    }
}
