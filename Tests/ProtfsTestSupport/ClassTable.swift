import ProtfsDomain

/// docs/CLASSES.md's table, written from its prose: what each class allows in each lock
/// state. The tests' oracle, kept apart from the vault's own policy so that one cannot
/// agree with a mistake of the other.
public enum ClassTable {
    /// What an operation asks of a file's class key (docs/CLASSES.md's "content").
    public enum Need: Sendable {
        /// Only names, attributes and metadata: the "always allowed" list.
        case nothing
        /// Opening an existing file to read or write it.
        case existingContent
        /// Creating a regular file (its new key is wrapped under the class key).
        case newFile
    }

    /// One cell of the table.
    enum Allowance {
        case everything
        case nothing
        /// `completeUnlessOpen` without its private key: new files yes, existing ones no.
        case newFilesOnly

        func permits(_ need: Need) -> Bool {
            switch (self, need) {
            case (_, .nothing), (.everything, _), (.newFilesOnly, .newFile): true
            case (.nothing, _), (.newFilesOnly, .existingContent): false
            }
        }
    }

    static let table: [ProtectionClass: [LockState: Allowance]] = [
        .none: [.beforeFirstUnlock: .everything, .unlocked: .everything, .locking: .everything, .locked: .everything],
        .completeUntilFirstUserAuthentication:
            [.beforeFirstUnlock: .nothing, .unlocked: .everything, .locking: .everything, .locked: .everything],
        .completeUnlessOpen: [.beforeFirstUnlock: .newFilesOnly, .unlocked: .everything, .locking: .everything, .locked: .newFilesOnly],
        .complete: [.beforeFirstUnlock: .nothing, .unlocked: .everything, .locking: .everything, .locked: .nothing],
    ]

    public static func allows(_ need: Need, _ protectionClass: ProtectionClass, in state: LockState) -> Bool {
        table[protectionClass]![state]!.permits(need)
    }

    /// A file's re-class unwraps with the old class's key (what opening an existing file
    /// needs) and wraps with the new class's key (what creating a file needs; the public
    /// key for `completeUnlessOpen`).
    public static func allowsReclass(from old: ProtectionClass, to new: ProtectionClass, in state: LockState) -> Bool {
        allows(.existingContent, old, in: state) && allows(.newFile, new, in: state)
    }
}
