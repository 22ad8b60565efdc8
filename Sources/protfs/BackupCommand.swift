import Glibc
import ProtfsCommandLine
import ProtfsCore
import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// `protfs backup BACKING ARCHIVE [--device-key PATH] [--passcode-file F] [--backup-passphrase-file F]`
/// and `protfs backup --verify ARCHIVE [--backup-passphrase-file F]` (docs/BACKUP.md). A mounted
/// vault is backed up by its daemon (`MountedBackup`), which holds the backing directory.
enum BackupCommand {
    static let command = Command(
        name: "backup",
        synopsis: "BACKING ARCHIVE [--device-key PATH] [--passcode-file F | --passcode-command CMD] [--backup-passphrase-file F] [--progress | --json] | --verify ARCHIVE [--device-key PATH] [--backup-passphrase-file F]",
        valueOptions: PasscodeReader.options.union(["--device-key", "--backup-passphrase-file"]),
        flags: ProgressMeter.flags.union(["--verify"]),
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let passphrases = PasscodeReader(passcodeFile: arguments.value("--backup-passphrase-file"))
        if arguments.isSet("--verify") {
            let archive = try arguments.operands("ARCHIVE")[0]
            var findings = 0
            let entries = try VaultRestore.verify(archive: archive, passphrase: try passphrases.read(prompt: "Backup passphrase: "),
                                                  deviceKeyPath: arguments.value("--device-key")) { finding in
                findings += 1
                print("finding: \(finding)")
            }
            print("\(archive): intact (\(entries) objects)"
                  + (findings > 0 ? "; \(findings) findings: a restore leaves out or changes the entries above" : ""))
            return
        }
        let operands = try arguments.operands("BACKING", "ARCHIVE")
        if let backing = CanonicalPath.resolved(operands[0]),
           let mountpoint = MountTable.protfsMountPoints(ofBacking: backing).last {
            if arguments.value("--device-key") != nil {
                writeError("protfs backup: warning: \(backing) is mounted: its daemon's device key is used, not --device-key\n")
            }
            try MountedBackup.run(backing: backing, mountpoint: mountpoint, archive: operands[1],
                                  passcodes: try PasscodeReader(options: arguments, vault: backing),
                                  passphrases: passphrases, progress: meter(arguments, backing: backing))
            return
        }
        let vault = try Vault.open(backing: operands[0], deviceKeyPath: arguments.value("--device-key"),
                                   sealer: TPMDeviceKeySealer(tcti: nil))
        for warning in vault.warnings { writeError("protfs backup: warning: \(warning)\n") }
        let classKeys: PasscodeClassKeys
        if vault.passcodeSet {
            classKeys = try vault.verifyPasscode(try PasscodeReader(options: arguments, vault: operands[0]).read())
        } else {
            classKeys = try vault.classKeysWithoutPasscode()
        }
        let passphrase = try passphrases.readNew(prompt: "Backup passphrase: ", confirmation: "Repeat the backup passphrase: ")
        let progress = meter(arguments, backing: operands[0])
        // Nothing else uses the vault: a gate of its own, which nothing contends.
        let pending = try PendingArchive.create(at: operands[1])
        let backup = try VaultBackup.stream(vault: vault, classKeys: classKeys, into: pending.file, named: operands[1],
                                            passphrase: passphrase, itemOwner: VaultBackup.itemOwner(asking: geteuid()),
                                            snapshots: SnapshotGate(), progress: progress.update)
        progress.finish()
        try pending.publish()
        print("Backed up \(operands[0]) to \(operands[1])" + backup.itemsLeftOut.sentenceEnd)
    }

    /// The progress of a backup, its time left reckoned against the backing directory's size.
    private static func meter(_ arguments: ParsedArguments, backing: String) -> ProgressMeter {
        let style = ProgressMeter.Style(arguments)
        return ProgressMeter(command: "protfs backup", style: style, total: style == .none ? nil : .init(TreeTally(path: backing)))
    }
}
