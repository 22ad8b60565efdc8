import Glibc
import CProtfsSys
import ProtfsCore
import ProtfsCrypto
import ProtfsFuse
import ProtfsSystem

/// `protfs mount`: checks, opens the vault (and unlocks it when given `passcode_file`),
/// mounts, detaches unless `-f`, and serves until unmounted or SIGTERM.
enum MountCommand {
    static func run(_ arguments: [String]) -> ExitCode {
        let options: MountOptions
        do {
            options = try MountOptions(arguments: arguments)
        } catch {
            Console.error(error.description)
            return .usage
        }
        guard let backing = MountPointChecks.canonical(options.backing) else {
            Console.error("backing directory \(options.backing) does not exist")
            return .notFound
        }
        guard let mountpoint = MountPointChecks.canonical(options.mountpoint) else {
            Console.error("mount point \(options.mountpoint) does not exist")
            return .notFound
        }
        do {
            try MountPointChecks.clearDeadMount(at: mountpoint)
            try MountPointChecks.check(backing: backing, mountpoint: mountpoint, nonempty: options.nonempty)
        } catch {
            Console.error(error.description)
            return .failure
        }
        DaemonHardening.apply()

        let vault: Vault
        do {
            vault = try Vault.open(backing: backing, deviceKeyPath: options.deviceKey)
            for warning in vault.warnings { Console.error("warning: \(warning)") }
            if let passcodeFile = options.passcodeFile {
                let passcode = try PasscodeReader(passcodeFile: passcodeFile).read()
                try vault.unlock(passcode: passcode)
            }
        } catch {
            Console.error(error.description)
            return error.exitCode
        }

        let log = DaemonLog(debug: options.debug)
        let controller = LockController(initialState: options.passcodeFile == nil ? .beforeFirstUnlock : .unlocked)
        var configuration = options.configuration
        configuration.backing = backing
        configuration.mountpoint = mountpoint
        let session: FuseSession
        do {
            let fileSystem = try VaultFileSystem(vault: vault, controller: controller)
            session = try FuseSession(adapter: FuseAdapter(fileSystem: fileSystem, log: log), configuration: configuration)
        } catch let error as FuseSessionError {
            Console.error("\(error)" + (options.fuseOptions.isEmpty ? "" : " (options passed to libfuse: \(options.fuseOptions.joined(separator: ",")))"))
            return .failure
        } catch {
            Console.error("cannot serve the vault at \(backing): \(error)")
            return .failure
        }
        guard session.daemonize(foreground: options.foreground) else {
            Console.error("could not detach from the terminal")
            return .failure
        }
        if !options.foreground { log.detach() }
        log.info("serving \(backing) on \(mountpoint)")
        _ = session.serve(maxThreads: configuration.maxThreads)
        log.info("unmounted \(mountpoint)")
        return .success
    }
}

/// The daemon is not dumpable and writes no core: its memory holds keys and plaintext.
enum DaemonHardening {
    static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(RLIMIT_CORE, &none)
        _ = protfs_set_undumpable()
    }
}
