import ProtfsCommandLine
import ProtfsCore
import ProtfsFormat
import ProtfsCrypto

/// `protfs backup BACKING ARCHIVE [--device-key PATH] [--passcode-file F] [--backup-passphrase-file F]`
/// and `protfs backup --verify ARCHIVE [--backup-passphrase-file F]` (docs/BACKUP.md). The vault
/// must be unmounted: the daemon holds its lock (a backup through the daemon is a later step).
enum BackupCommand {
    static let command = Command(
        name: "backup",
        synopsis: "BACKING ARCHIVE [--device-key PATH] [--passcode-file F] [--backup-passphrase-file F] | --verify ARCHIVE [--device-key PATH] [--backup-passphrase-file F]",
        valueOptions: ["--device-key", "--passcode-file", "--backup-passphrase-file"],
        flags: ["--verify"],
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let passphrases = PasscodeReader(passcodeFile: arguments.value("--backup-passphrase-file"))
        if arguments.isSet("--verify") {
            let archive = try arguments.operands("ARCHIVE")[0]
            let entries = try VaultRestore.verify(archive: archive, passphrase: try passphrases.read(prompt: "Backup passphrase: "),
                                                  deviceKeyPath: arguments.value("--device-key"))
            print("\(archive): intact (\(entries) objects)")
            return
        }
        let operands = try arguments.operands("BACKING", "ARCHIVE")
        let vault = try Vault.open(backing: operands[0], deviceKeyPath: arguments.value("--device-key"))
        for warning in vault.warnings { writeError("protfs backup: warning: \(warning)\n") }
        let classKeys: PasscodeClassKeys
        if vault.passcodeSet {
            classKeys = try vault.verifyPasscode(try PasscodeReader(passcodeFile: arguments.value("--passcode-file")).read())
        } else {
            classKeys = try vault.classKeysWithoutPasscode()
        }
        let passphrase = try passphrases.readNew(prompt: "Backup passphrase: ", confirmation: "Repeat the backup passphrase: ")
        let progress = BackupProgress()
        let backup = try VaultBackup.write(vault: vault, classKeys: classKeys, to: operands[1], passphrase: passphrase,
                                           progress: progress.show)
        progress.end()
        print("Backed up \(operands[0]) to \(operands[1])"
              + (backup.itemsLeftOut > 0 ? " (\(backup.itemsLeftOut) ThisDeviceOnly items left out)." : "."))
    }
}
