import ProtfsCommandLine
import ProtfsCore
import ProtfsCrypto

/// `protfs restore ARCHIVE BACKING [--device-key PATH] [--passcode-file F | --no-passcode]
/// [--backup-passphrase-file F] [--kdf ...]`: a new vault from a backup, under this device key
/// and a new passcode (docs/BACKUP.md).
enum RestoreCommand {
    static let command = Command(
        name: "restore",
        synopsis: "ARCHIVE BACKING [--device-key PATH] [--passcode-file F | --no-passcode] [--backup-passphrase-file F]",
        valueOptions: ["--device-key", "--passcode-file", "--backup-passphrase-file"],
        flags: ["--no-passcode"],
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let operands = try arguments.operands("ARCHIVE", "BACKING")
        let noPasscode = arguments.isSet("--no-passcode")
        if noPasscode, arguments.value("--passcode-file") != nil {
            throw UsageError("--no-passcode and --passcode-file exclude each other")
        }
        let passphrase = try PasscodeReader(passcodeFile: arguments.value("--backup-passphrase-file"))
            .read(prompt: "Backup passphrase: ")
        let passcodes = PasscodeReader(passcodeFile: arguments.value("--passcode-file"))
        let restored = try VaultRestore.restore(archive: operands[0], backing: operands[1],
                                                deviceKeyPath: arguments.value("--device-key"), passphrase: passphrase,
                                                passcodeAtHand: noPasscode || arguments.value("--passcode-file") != nil,
                                                passcode: { () throws(PasscodeInputError) in noPasscode ? nil : try passcodes.readNew() },
                                                report: warn)
        let leftOut = restored.entriesLeftOut > 0 ? " (\(restored.entriesLeftOut) left out, as the warnings say)" : ""
        print("Restored \(restored.entries - restored.entriesLeftOut) objects of vault \(restored.vaultID) into \(operands[1])\(leftOut).")
        if restored.setIDBitsCleared > 0 {
            writeError("protfs restore: warning: cleared the set-user-ID and set-group-ID bits the archive gave "
                       + "\(restored.setIDBitsCleared) objects: a restore never makes them\n")
        }
        if restored.deviceKeyCreated {
            writeError("protfs restore: created the device key \(restored.deviceKeyPath). Back it up and keep it private: "
                       + "losing it loses the vault, class none included.\n")
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
