import ProtfsDomain
/// Everything one `fsck` pass found and did, and the exit code it calls for (SPEC section 5:
/// 0 clean, 8 damage left, 1 could not check).
public struct VaultCheckReport: Sendable {
    public internal(set) var findings: [VaultFinding] = []
    public internal(set) var files = 0
    public internal(set) var directories = 0
    public internal(set) var symlinks = 0
    /// FIFOs, sockets and device nodes: only their names are checked.
    public internal(set) var otherNodes = 0
    /// Keychain item records (`protfs.items`), and those whose secret was not checked for
    /// want of their class key.
    public internal(set) var items = 0
    public internal(set) var itemsNotChecked = 0
    /// Item records in version 1 (no lookup attributes, docs/FORMAT.md): read as they are, and
    /// rewritten in version 2 when a change needs it. Not damage.
    public internal(set) var formatOneItems = 0
    /// Classes whose keys were not in memory, so their files' contents were not checked.
    public internal(set) var classesWithoutKeys: [ProtectionClass] = []
    /// Files whose contents were not checked for want of their class key.
    public internal(set) var filesNotChecked = 0
    /// Housekeeping, done in every run and not reported as damage: `protfs.tmp.*` files left
    /// by interrupted atomic writes, and class hints that were missing (SPEC section 4).
    public internal(set) var temporaryFilesRemoved = 0
    public internal(set) var classHintsAdded = 0
    /// Objects in on-disk format 1, whose class an observer of the backing directory can read
    /// (docs/FORMAT.md). Not damage: `--repair` rewrites directory records in format 2; a file
    /// keeps format 1 until it is re-created (copied) through the mount.
    public internal(set) var formatOneFiles = 0
    public internal(set) var formatOneDirectories = 0
    public internal(set) var directoryRecordsUpgraded = 0
    /// Symlinks whose target is in format 1, sealed to no location, so a target copied from
    /// another symlink would open (docs/FORMAT.md). Not damage: `--repair` rewrites them.
    public internal(set) var formatOneSymlinks = 0
    public internal(set) var symlinksUpgraded = 0

    public var objectsChecked: Int { files + directories + symlinks + otherNodes + items }
    public var damaged: [VaultFinding] { findings.filter(\.problem.isDamage) }
    public var repairedCount: Int { damaged.filter(\.outcome.isRepaired).count }
    public var damageLeft: Bool { damaged.contains { !$0.outcome.isRepaired } }
    public var couldNotCheckEverything: Bool { findings.contains(where: \.problem.isUnchecked) }

    public var exitCode: ExitCode {
        if damageLeft { return .damage }
        return couldNotCheckEverything ? .failure : .success
    }

    /// One line for people.
    public var summary: String {
        var kinds = [Self.count(files, "file", "files"), Self.count(directories, "directory", "directories"),
                     Self.count(symlinks, "symlink", "symlinks")]
        if otherNodes > 0 { kinds.append(Self.count(otherNodes, "other node", "other nodes")) }
        if items > 0 { kinds.append(Self.count(items, "keychain item", "keychain items")) }
        var parts = ["checked \(Self.count(objectsChecked, "object", "objects")) (\(kinds.joined(separator: ", ")))",
                     "\(damaged.count) damaged", "\(repairedCount) repaired"]
        if !classesWithoutKeys.isEmpty {
            let names = classesWithoutKeys.map(\.name).joined(separator: ", ")
            parts.append("not checked without the passcode: contents of \(classesWithoutKeys.count == 1 ? "class" : "classes") \(names)"
                         + " (\(Self.count(filesNotChecked, "file", "files")))")
        }
        if itemsNotChecked > 0 {
            parts.append("not checked without the passcode: secrets of \(Self.count(itemsNotChecked, "keychain item", "keychain items"))")
        }
        if formatOneItems > 0 {
            parts.append("in item format 1, without lookup attributes: \(Self.count(formatOneItems, "keychain item", "keychain items"))"
                         + " (read as they are)")
        }
        if formatOneFiles + formatOneDirectories > 0 {
            let objects = [Self.count(formatOneFiles, "file", "files"), Self.count(formatOneDirectories, "directory", "directories")]
            var remedies: [String] = []
            if formatOneDirectories > 0 { remedies.append("--repair rewrites directories") }
            if formatOneFiles > 0 { remedies.append("copying a file through the mount re-creates it") }
            parts.append("in format 1, their class readable in the backing directory: \(objects.joined(separator: ", "))"
                         + " (\(remedies.joined(separator: "; ")))")
        }
        if directoryRecordsUpgraded > 0 {
            parts.append("\(Self.count(directoryRecordsUpgraded, "directory record", "directory records")) rewritten in format 2")
        }
        if formatOneSymlinks > 0 {
            parts.append("in format 1, their target not bound to their name: \(Self.count(formatOneSymlinks, "symlink", "symlinks"))"
                         + " (--repair rewrites them)")
        }
        if symlinksUpgraded > 0 {
            parts.append("\(Self.count(symlinksUpgraded, "symlink", "symlinks")) rewritten in format 2")
        }
        if couldNotCheckEverything { parts.append("some objects could not be checked (see the unchecked lines)") }
        return parts.joined(separator: "; ")
    }

    private static func count(_ n: Int, _ singular: String, _ plural: String) -> String { "\(n) \(n == 1 ? singular : plural)" }
}
