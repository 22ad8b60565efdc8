/// What `init` and `restore` say when they create a plain device key: its backup is its
/// directory (the key and the `vaults/` records beside it, without which passcodes are
/// refused), as the README says.
enum DeviceKeyAdvice {
    static func created(_ path: String) -> String {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let place = directory.isEmpty ? "." : directory
        return "created the device key \(path). Back up its directory with the vaults/ records beside it "
            + "(cp -a \(place) BACKUP) and keep it private: losing the key loses the vault, class none included.\n"
    }
}
