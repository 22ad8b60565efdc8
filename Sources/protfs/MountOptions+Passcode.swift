import ProtfsCommandLine

extension MountOptions {
    /// Where the first unlock's passcode comes from, or nil when the mount reads none and
    /// starts in `beforeFirstUnlock`: `passcode_file`, `passcode_command`, the systemd
    /// credential `protfs-passcode` when a unit passed it, or `ask_passcode` (the terminal,
    /// else the system's password agents). Never a prompt nobody asked for: fstab, systemd
    /// and ssh have no terminal.
    func passcodeReader(vault: String) -> PasscodeReader? {
        guard passcodeFile != nil || passcodeCommand != nil || askPasscode || PasscodeReader.credentialPath() != nil
        else { return nil }
        return PasscodeReader(passcodeFile: passcodeFile, passcodeCommand: passcodeCommand, vault: vault)
    }
}
