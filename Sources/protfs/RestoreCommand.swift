import ProtfsCommandLine
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

/// `protfs restore ARCHIVE BACKING [--device-key PATH] [--passcode-file F | --passcode-command CMD |
/// --no-passcode] [--backup-passphrase-file F] [--progress|--json]`: a new vault from a backup, under this device key
/// and a new passcode (docs/BACKUP.md).
enum RestoreCommand {
    static let command = Command(
        name: "restore",
        synopsis: "ARCHIVE BACKING [--device-key PATH] [--passcode-file F | --passcode-command CMD | --no-passcode] "
            + "[--backup-passphrase-file F] [--progress | --json]",
        valueOptions: PasscodeReader.options.union(["--device-key", "--backup-passphrase-file"]),
        flags: ProgressMeter.flags.union(["--no-passcode"]),
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let operands = try arguments.operands("ARCHIVE", "BACKING")
        let noPasscode = arguments.isSet("--no-passcode")
        let passphrase = try PasscodeReader(passcodeFile: arguments.value("--backup-passphrase-file"))
            .read(prompt: "Backup passphrase: ")
        let passcodes = try PasscodeReader(options: arguments, vault: operands[1])
        // The archive's size: its contents are nearly all of it, enough for the time left.
        let style = ProgressMeter.Style(arguments)
        let archiveSize = style == .none ? nil : TreeTally(path: operands[0]).bytes
        let meter = ProgressMeter(command: "protfs restore", style: style, total: archiveSize.map { .init(bytes: $0) })
        let restored = try VaultRestore.restore(archive: operands[0], backing: operands[1],
                                                deviceKeyPath: arguments.value("--device-key"),
                                                sealer: TPMDeviceKeySealer(tcti: nil), passphrase: passphrase,
                                                passcodeAtHand: noPasscode || passcodes.passcodeFile != nil || passcodes.passcodeCommand != nil,
                                                passcode: { () throws(PasscodeInputError) in noPasscode ? nil : try passcodes.readNew() },
                                                report: warn, progress: meter.update)
        meter.finish(objects: restored.entries, bytes: restored.bytes)
        let leftOut = restored.entriesLeftOut > 0 ? " (\(restored.entriesLeftOut) left out, as the warnings say)" : ""
        print("Restored \(restored.entries - restored.entriesLeftOut) objects of vault \(restored.vaultID) into \(operands[1])\(leftOut).")
        if restored.setIDBitsCleared > 0 {
            writeError("protfs restore: warning: cleared the set-user-ID and set-group-ID bits the archive gave "
                       + "\(restored.setIDBitsCleared) objects: a restore never makes them\n")
        }
        if restored.deviceKeyCreated {
            writeError("protfs restore: " + DeviceKeyAdvice.created(restored.deviceKeyPath))
        }
    }

    /// Each entry left out, and a backing root that was someone else's, named as in the
    /// archive. Set-id bits are counted once at the end instead; the daemon's records always
    /// go to the restoring user (docs/BACKUP.md), which `backup --verify` lists one by one.
    private static func warn(_ finding: ArchiveFinding) {
        switch finding.problem {
        case .setIDBits, .recordOwner: return
        case .deviceNode, .notARecord, .recordMalformed, .rootOwner: writeError("protfs restore: warning: \(finding)\n")
        }
    }
}
