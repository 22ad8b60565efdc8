import Glibc
import CProtfsSys
import ProtfsCommandLine
import ProtfsControl
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import ProtfsFuse
import ProtfsFuseUring
import ProtfsLog
import ProtfsSystem
import ProtfsSystemd

/// `protfs mount`: checks, opens the vault (and unlocks it when given a passcode source),
/// mounts, and serves until unmounted or SIGTERM; unless `-f`, in a daemon it starts and
/// waits for (`Detachment`).
enum MountCommand {
    static let command = Command(name: "mount",
                                 synopsis: "BACKING MOUNTPOINT [-f] [-o OPTIONS] [--device-key PATH] [--passcode-file FILE | --passcode-command CMD]",
                                 valueOptions: ["-o", Detachment.readyOption, "--device-key", "--passcode-file", "--passcode-command"],
                                 flags: ["-f"], valueLists: ["-o": MountOptions.offered], run: { arguments in
        let operands = try arguments.operands("BACKING", "MOUNTPOINT")
        let optionList = try optionList(arguments)
        let options = try MountOptions(backing: operands[0], mountpoint: operands[1], foreground: arguments.isSet("-f"),
                                       optionList: optionList)
        let detachment = try arguments.value(Detachment.readyOption).map(Detachment.init(adopting:))
        let status: ExitCode
        if options.remount {
            status = Remount.apply(options)
        } else if options.foreground || detachment != nil {
            status = serve(options, detachment: detachment)
        } else {
            status = Detachment.spawnDaemon(mountArguments: (optionList.map { ["-o", $0] } ?? []) + ["--"] + operands)
        }
        if status != .success { throw CommandExit(code: status) }
    })

    /// The `-o` list with the options every other command spells `--device-key`,
    /// `--passcode-file` and `--passcode-command` added as the mount options they are (fstab
    /// has only `-o`).
    private static func optionList(_ arguments: ParsedArguments) throws(UsageError) -> String? {
        var list = arguments.value("-o").map { [$0] } ?? []
        let given = list.joined().split(separator: ",").map { $0.split(separator: "=", maxSplits: 1)[0] }
        for (flag, option) in [("--device-key", "device_key"), ("--passcode-file", "passcode_file"),
                               ("--passcode-command", "passcode_command")] {
            guard let value = arguments.value(flag) else { continue }
            guard !given.contains(Substring(option)) else { throw UsageError("\(flag) and -o \(option)= exclude each other") }
            guard !value.contains(",") else { throw UsageError("\(flag) cannot contain a comma: it travels in the mount's option list") }
            list.append("\(option)=\(value)")
        }
        return list.isEmpty ? nil : list.joined(separator: ",")
    }

    /// Serves in this process; `detachment`: the waiting command to tell how it went.
    static func serve(_ options: MountOptions, detachment: Detachment?) -> ExitCode {
        let status = checkAndServe(options, detachment: detachment)
        // A failure before the mount was ready is the waiting command's exit code.
        if status != .success { detachment?.report(status) }
        return status
    }

    private static func checkAndServe(_ options: MountOptions, detachment: Detachment?) -> ExitCode {
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
        // Before anything else can call OpenSSL: its allocator goes to locked memory now, or
        // the content ciphers' key schedules would be in ordinary heap (docs/GUARANTEES.md).
        let cipherMemory = OpenSSLLockedHeap.usage
        if !cipherMemory.installed || cipherMemory.lockFailed {
            report("warning: the content cipher's key schedules are not in locked memory"
                   + (cipherMemory.lockFailed ? " (RLIMIT_MEMLOCK too low)" : ""))
        }
        return openAndServe(options, backing: backing, mountpoint: mountpoint, detachment: detachment)
    }

    /// Opens the vault (unlocking it when given a passcode source), then mounts and serves.
    private static func openAndServe(_ options: MountOptions, backing: String, mountpoint: String,
                                     detachment: Detachment?) -> ExitCode {
        let vault: Vault
        var unlocked = false
        do {
            vault = try Vault.open(backing: backing, deviceKeyPath: options.deviceKey,
                                   sealer: TPMDeviceKeySealer(tcti: options.tpmTCTI))
            for warning in vault.warnings { report("warning: \(warning)") }
            if !vault.passcodeSet {
                // The device key alone opens it: it mounts `unlocked` (docs/BACKUP.md).
                if options.passcodeFile != nil || options.passcodeCommand != nil {
                    report("warning: this vault has no passcode; passcode_file and passcode_command are not read")
                }
                vault.install(try vault.classKeysWithoutPasscode())
            } else if let reader = options.passcodeReader(vault: mountpoint) {
                let passcode: SecureBuffer
                do { passcode = try reader.read() } catch { return failed(error) }
                try vault.unlock(passcode: passcode)
                unlocked = true
            }
        } catch {
            return failed(error)
        }
        return serve(vault: vault, unlocked: unlocked || !vault.passcodeSet, options: options, backing: backing,
                     mountpoint: mountpoint, detachment: detachment)
    }

    /// Mounts and serves; reports readiness (or the failure) to the waiting parent, if any.
    private static func serve(vault: Vault, unlocked: Bool, options: MountOptions, backing: String, mountpoint: String,
                              detachment: Detachment?) -> ExitCode {
        let log = DaemonLog(debug: options.debug)
        PlaintextMemory.reportRefusal { log.warning($0) }
        let controller = LockController(vault: vault, initialState: unlocked ? .unlocked : .beforeFirstUnlock,
                                        grace: options.grace, autolock: options.autolock)
        var configuration = options.configuration
        configuration.backing = backing
        configuration.mountpoint = mountpoint
        // Idle CPUs poll while requests stream in only when asked to (`PollingHold`): the CPU
        // latency target is the whole machine's, which a filesystem changes for nobody who
        // did not ask. Only root may.
        var latency: CPULatencyRequest?
        if options.idlePolling {
            do {
                latency = try CPULatencyRequest()
            } catch {
                report("option 'idle_poll' needs /dev/cpu_dma_latency, which only root may open (\(error))")
                return .failure
            }
        }
        let session: FuseSession
        let fileSystem: VaultFileSystem
        let adapter: FuseAdapter
        let control: ControlServer
        do {
            let snapshots = SnapshotGate()
            fileSystem = try VaultFileSystem(vault: vault, controller: controller, accessTimes: options.accessTimes,
                                             snapshots: snapshots, reportDamage: { log.damage($0) })
            adapter = FuseAdapter(fileSystem: fileSystem, log: log, privilege: MountPrivilege(owner: options.owner))
            let items = ItemStore(vault: vault, controller: controller, snapshots: snapshots, privilege: MountPrivilege(owner: options.owner),
                                  reportDamage: { log.damage($0) })
            // A passcode removal interrupted before its items went: finish it.
            if !vault.passcodeSet { try items.deleteAll(requiringPasscode: true) }
            control = try ControlServer(handler: DaemonControl(controller: controller, vault: vault, fileSystem: fileSystem,
                                                               items: items, mountpoint: mountpoint, log: log),
                                        mountpoint: mountpoint, mountingUser: options.owner)
            // FUSE over io_uring when asked for and the kernel offers it, else /dev/fuse.
            session = try FuseSession(adapter: adapter, configuration: configuration,
                                      makeTransport: options.ioUring ? { RingTransport(session: $0, log: $1) } : nil)
        } catch let error as FuseSessionError {
            report("\(error)" + (options.fuseOptions.isEmpty ? "" : " (options passed to libfuse: \(options.fuseOptions.joined(separator: ",")))"))
            return .failure
        } catch {
            report("cannot serve the vault at \(backing): \(error)")
            return .failure
        }
        controller.attach(contentKeys: fileSystem, cache: adapter)
        let reporting = DaemonReporting(log: log, controller: controller, mountpoint: mountpoint)
        do {
            try control.start()
        } catch {
            report("cannot open the control socket: \(error)")
            session.unmount()
            return .failure
        }
        RuntimeLockProbe.runIfAsked()
        detachment?.report(.success)
        if detachment != nil { log.detach() }
        reporting.mounted(backing: backing)
        if latency != nil { log.info("idle CPUs poll while requests stream in (idle_poll: the whole machine's CPU latency target)") }
        _ = session.serve(maxThreads: configuration.maxThreads, latency: latency)
        reporting.unmounting()
        control.stop()
        // Unmounted: nothing will use a key again.
        for protectionClass in ProtectionClass.allCases { fileSystem.dropContentKeys(of: protectionClass) }
        vault.keyring.remove(ProtectionClass.allCases)
        reporting.unmounted()
        return .success
    }
}

/// Messages of the mount command, which reports its own failures before choosing an exit code.
private func report(_ message: String) { writeError("protfs mount: \(message)\n") }

/// Reports why the mount cannot start; its exit code.
private func failed(_ error: some CommandError) -> ExitCode {
    report(error.description)
    return error.exitCode
}

/// The daemon is not dumpable and writes no core: its memory holds keys and plaintext. Its
/// signal mask is its own (a parent may hand down any): only the termination signals are
/// blocked, for the session's watcher thread to take. And it may hold as many descriptors as
/// the hard limit allows: every inode the kernel knows and every open file keeps a backing
/// descriptor. The node table stays under the limit (it asks the kernel to forget little-used
/// inodes, `InodePruner`), and the more it may hold, the fewer lookups that costs; what
/// each user may pin of it is cut from the raised limit (`DescriptorShares`).
/// Its threads share two malloc arenas: glibc gives each new thread an arena of its own (up
/// to 8 per core), and with the request loop's workers, each keeping the memory it once
/// used, that made the daemon's resident set grow with the number of threads ever busy.
enum DaemonHardening {
    static func apply() {
        _ = protfs_limit_malloc_arenas(2)
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = protfs_set_undumpable()
        TerminationSignals.blockInThisThreadAndItsChildren()
        var files = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        }
    }
}
