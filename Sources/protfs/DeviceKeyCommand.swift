import ProtfsCommandLine
import ProtfsCore
import ProtfsSystem

/// `protfs device-key BACKING [--device-key PATH] --to tpm2|file [--tpm2-pcrs LIST]
/// [--recovery-key-file FILE] [--passcode-file FILE | --passcode-command CMD]`: moves an
/// unmounted vault to a fresh device key, sealed by the TPM or plain, rewrapping only the
/// keybag (docs/OPERATIONS.md). The old key file, wherever a copy of it is, opens nothing
/// afterwards. With a recovery key, the vault opens without its TPM.
enum DeviceKeyCommand {
    static let command = Command(
        name: "device-key",
        synopsis: "BACKING [--device-key PATH] --to tpm2|file [--tpm2-pcrs LIST] [--recovery-key-file FILE] "
            + "[--passcode-file FILE | --passcode-command CMD]",
        valueOptions: PasscodeReader.options.union(["--device-key", "--to", "--tpm2-pcrs", "--recovery-key-file"]),
        flags: [],
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let backing = try arguments.operands("BACKING")[0]
        let sealing: Bool
        switch arguments.value("--to") {
        case "tpm2": sealing = true
        case "file": sealing = false
        default: throw UsageError("device-key needs --to tpm2 or --to file")
        }
        let pcrs = try InitCommand.parsePCRs(arguments.value("--tpm2-pcrs"), sealing: sealing)
        if let resolved = CanonicalPath.resolved(backing), let mountpoint = MountTable.protfsMountPoints(ofBacking: resolved).last {
            throw UsageError("\(backing) is mounted on \(mountpoint): unmount it before moving its device key")
        }
        // Read like a passcode (never from argv or the environment), into locked memory.
        let recovery = try arguments.value("--recovery-key-file").map { (file) throws in
            let text = try PasscodeReader(passcodeFile: file).read()
            defer { text.wipe() }
            return try RecoveryKey(parsing: text)
        }
        let tpm = TPMDeviceKeySealer(tcti: nil, pcrs: pcrs)
        let vault = try Vault.open(backing: backing, deviceKeyPath: arguments.value("--device-key"), sealer: tpm, recovery: recovery)
        for warning in vault.warnings { writeError("protfs device-key: warning: \(warning)\n") }
        let passcode = vault.passcodeSet ? try PasscodeReader(options: arguments, vault: backing).read() : nil
        try vault.moveDeviceKey(passcode: passcode, to: sealing ? tpm : nil)
        print("Moved \(backing) to a new device key in \(vault.deviceKeyFile.path)"
              + (sealing ? ", sealed by this machine's TPM" + (pcrs.isEmpty ? "" : " to PCR \(pcrs)") : ", a plain key file")
              + "; the old key opens nothing of it any more.")
        if sealing {
            writeError("protfs device-key: a cleared or replaced TPM loses the vault, class none included"
                       + (vault.hasRecoveryKey ? ", unless its recovery key stands in.\n"
                                                : ": 'protfs backup' moves it to another machine.\n"))
        }
    }
}
