import Glibc
import ProtfsCommandLine
import ProtfsCore
import ProtfsFormat
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// `protfs fsck BACKING [--repair] [--device-key PATH] [--passcode-file FILE] [--progress|--json]`: checks an
/// unmounted vault (the backing lock refuses a mounted one), prints one line per finding
/// and a summary, and exits 0 clean, 8 damage left, 1 could not check (docs/CONTROL.md).
enum FsckCommand {
    static let command = Command(
        name: "fsck",
        synopsis: "BACKING [--repair] [--device-key PATH] [--passcode-file FILE | --passcode-command CMD] [--progress | --json]",
        valueOptions: PasscodeReader.options.union(["--device-key"]),
        flags: ProgressMeter.flags.union(["--repair"]),
        run: run)

    /// How long a piped standard input may take to deliver the passcode line.
    static let standardInputWaitMilliseconds: Int32 = 2000

    private static func run(_ arguments: ParsedArguments) throws {
        let backing = try arguments.operands("BACKING")[0]
        let vault: Vault
        do { vault = try Vault.open(backing: backing, deviceKeyPath: arguments.value("--device-key"),
                                             sealer: TPMDeviceKeySealer(tcti: nil)) } catch .rootMetadataDamaged {
            print("damaged: /: directory metadata (protfs.dir) of the root fails authentication, so no name in the vault "
                  + "can be read; --repair cannot fix this: restore protfs.dir from a backup")
            throw CommandExit(code: .damage)
        }
        for warning in vault.warnings { writeError("protfs fsck: warning: \(warning)\n") }
        let stateMissing = try checkState(of: vault, repair: arguments.isSet("--repair"))
        if !vault.passcodeSet {
            vault.install(try vault.classKeysWithoutPasscode())
        } else if !stateMissing, let passcode = try readPasscode(PasscodeReader(options: arguments, vault: arguments.operands.first)) {
            try vault.unlock(passcode: passcode)
        }
        let checker = VaultChecker(vault: vault, repair: arguments.isSet("--repair"))
        let style = ProgressMeter.Style(arguments)
        let meter = ProgressMeter(command: "protfs fsck", style: style,
                                  total: style == .none ? nil : .init(TreeTally(path: backing)))
        checker.progress = meter.update
        let report = checker.run()
        meter.finish(objects: UInt64(report.objectsChecked), bytes: checker.bytesChecked)
        for finding in report.findings { print(finding.line) }
        print("protfs fsck: \(report.summary)")
        if stateMissing { throw CommandExit(code: .damage) }
        if report.exitCode != .success { throw CommandExit(code: report.exitCode) }
    }

    /// A missing wrong-passcode record (beside the device key) refuses every passcode:
    /// reported, or re-created by `--repair`. True when it is still missing (fsck then checks
    /// what needs no passcode).
    private static func checkState(of vault: Vault, repair: Bool) throws(VaultError) -> Bool {
        guard vault.stateIsMissing else { return false }
        if repair {
            if let path = try vault.recreateMissingState() {
                print("repaired: the wrong-passcode record \(path) was missing; made a new one whose counter stands at "
                      + "\(WrongPasscodeDelays.firstDelayedFailure - 1) failed attempts (the next wrong passcode starts a delay)")
            }
            return false
        }
        print("damaged: the wrong-passcode record \(vault.statePath) is missing, so passcodes are refused (and no passcode "
              + "was asked for): restore it from a backup, or run again with --repair to make a new one")
        return true
    }

    /// The passcode is optional here: without one, fsck checks what needs none. From
    /// `--passcode-file`, `--passcode-command` or the systemd credential; else the terminal
    /// (an empty line skips); else the first line of standard input, if one comes within
    /// `standardInputWaitMilliseconds` (an empty or closed input, or none at all, skips: fsck
    /// never hangs on an idle pipe, nor asks the password agents).
    private static func readPasscode(_ reader: PasscodeReader) throws(PasscodeInputError) -> SecureBuffer? {
        if reader.passcodeFile != nil || reader.passcodeCommand != nil || PasscodeReader.credentialPath() != nil {
            return try reader.read()
        }
        if isatty(STDIN_FILENO) != 1 {
            guard !PasscodeReader.standardInputIsEmpty else { return nil }
            var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&input, 1, standardInputWaitMilliseconds) == 1 else { return nil }
        }
        do {
            return try reader.read(prompt: "Passcode (empty to check only what needs none): ")
        } catch .empty, .missing {
            return nil
        }
    }
}
