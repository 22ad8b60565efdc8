import Glibc
import ProtfsCrypto

/// The dialogue of `passwd`, the same whether the vault is mounted (`protfsctl passwd`, its
/// daemon does the change) or not (`protfs passwd`, the command does it): the current
/// passcode, then the new one (twice on a terminal), a line each; on a vault without a
/// passcode, only the new one; with `--remove`, the current one, after a confirmation.
public struct PasscodeChange {
    public static let flags: Set = ["--remove", "--yes"]

    /// What the change is made through.
    public struct Actions {
        public let change: (_ old: SecureBuffer, _ new: SecureBuffer) throws -> Void
        public let set: (_ new: SecureBuffer) throws -> Void
        public let remove: (_ old: SecureBuffer) throws -> Void
        /// When the `whenPasscodeSetThisDeviceOnly` items go once the passcode is removed.
        public let itemsGo: String

        public init(change: @escaping (SecureBuffer, SecureBuffer) throws -> Void, set: @escaping (SecureBuffer) throws -> Void,
                    remove: @escaping (SecureBuffer) throws -> Void, itemsGo: String) {
            (self.change, self.set, self.remove, self.itemsGo) = (change, set, remove, itemsGo)
        }
    }

    /// Runs the dialogue for `vault` (how messages name it); `prefix` starts each message.
    public static func run(_ arguments: ParsedArguments, vault: String, hasPasscode: Bool, prefix: String,
                           _ actions: Actions) throws {
        let remove = arguments.isSet("--remove")
        if arguments.isSet("--yes") && !remove { throw UsageError("--yes goes with --remove") }
        let reader = PasscodeReader(passcodeFile: nil)
        if remove {
            guard hasPasscode else { throw UsageError("\(vault) has no passcode to remove") }
            try confirmRemoval(of: vault, given: arguments.isSet("--yes"))
            try actions.remove(try reader.read(prompt: "Current passcode: "))
            writeError("\(prefix): the passcode of \(vault) was removed; its whenPasscodeSetThisDeviceOnly items \(actions.itemsGo)\n")
        } else if hasPasscode {
            let old = try reader.read(prompt: "Current passcode: ")
            try actions.change(old, try reader.readNew())
            writeError("\(prefix): the passcode of \(vault) was changed\n")
        } else {
            try actions.set(try reader.readNew())
            writeError("\(prefix): \(vault) now has a passcode\n")
        }
    }

    /// `--yes` for scripts; otherwise a `yes` typed on the terminal. Without a terminal and
    /// without `--yes` the removal is refused: nothing may answer for the user.
    private static func confirmRemoval(of vault: String, given yes: Bool) throws {
        if yes { return }
        guard isatty(STDIN_FILENO) == 1 else {
            throw UsageError("removing a passcode needs a confirmation: answer on a terminal, or pass --yes")
        }
        writeError("Remove the passcode of \(vault)? Whoever holds the device key will read every class, and the "
                   + "whenPasscodeSetThisDeviceOnly items are deleted. Type 'yes' to go on: ")
        guard let answer = Swift.readLine(strippingNewline: true), answer == "yes" else {
            throw CommandExit(code: .failure)
        }
    }
}
