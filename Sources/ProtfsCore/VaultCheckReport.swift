/// Everything one `fsck` pass found and did, and the exit code it calls for (SPEC section 5:
/// 0 clean, 8 damage left, 1 could not check).
public struct VaultCheckReport: Sendable {
    public internal(set) var findings: [VaultFinding] = []
    public internal(set) var files = 0
    public internal(set) var directories = 0
    public internal(set) var symlinks = 0
    /// FIFOs, sockets and device nodes: only their names are checked.
    public internal(set) var otherNodes = 0
    /// Classes whose keys were not in memory, so their files' contents were not checked.
    public internal(set) var classesWithoutKeys: [ProtectionClass] = []
    /// Files whose contents were not checked for want of their class key.
    public internal(set) var filesNotChecked = 0
    /// Housekeeping, done in every run and not reported as damage: `protfs.tmp.*` files left
    /// by interrupted atomic writes, and class hints that were missing (SPEC section 4).
    public internal(set) var temporaryFilesRemoved = 0
    public internal(set) var classHintsAdded = 0

    public var objectsChecked: Int { files + directories + symlinks + otherNodes }
    public var damaged: [VaultFinding] { findings.filter(\.problem.isDamage) }
    public var repairedCount: Int { damaged.filter(\.outcome.isRepaired).count }
    public var damageLeft: Bool { damaged.contains { !$0.outcome.isRepaired } }
    public var couldNotCheckEverything: Bool { findings.contains { if case .unreadable = $0.problem { true } else { false } } }

    public var exitCode: ExitCode {
        if damageLeft { return .damage }
        return couldNotCheckEverything ? .failure : .success
    }

    /// One line for people.
    public var summary: String {
        var kinds = [Self.count(files, "file", "files"), Self.count(directories, "directory", "directories"),
                     Self.count(symlinks, "symlink", "symlinks")]
        if otherNodes > 0 { kinds.append(Self.count(otherNodes, "other node", "other nodes")) }
        var parts = ["checked \(Self.count(objectsChecked, "object", "objects")) (\(kinds.joined(separator: ", ")))",
                     "\(damaged.count) damaged", "\(repairedCount) repaired"]
        if !classesWithoutKeys.isEmpty {
            let names = classesWithoutKeys.map(\.name).joined(separator: ", ")
            parts.append("not checked without the passcode: contents of \(classesWithoutKeys.count == 1 ? "class" : "classes") \(names)"
                         + " (\(Self.count(filesNotChecked, "file", "files")))")
        }
        if couldNotCheckEverything { parts.append("some objects could not be checked (see the unchecked lines)") }
        return parts.joined(separator: "; ")
    }

    private static func count(_ n: Int, _ singular: String, _ plural: String) -> String { "\(n) \(n == 1 ? singular : plural)" }
}
