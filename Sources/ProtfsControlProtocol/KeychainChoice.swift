import FoundationEssentials
import Glibc
import ProtfsSystem

/// Which protfs mount holds the caller's keychain items, decided here for every Swift client
/// of the keychain (the Secret Service provider and the DataProtection library; docs/SECRETS.md):
/// the mount holding the path named in code or on the command line, else by
/// `PROTFS_KEYCHAIN`, else by the first line of `$XDG_CONFIG_HOME/protfs/keychain`
/// (`~/.config/protfs/keychain`); else the only mounted vault whose owner is the caller.
/// Another user's vault is never taken unasked: its owner manages it (backs it up, changes its
/// passcode), so a default there would put the caller's secrets in their keeping.
public enum KeychainChoice: Equatable, Sendable {
    case found(String)
    /// Why there is none, for the user.
    case none(String)

    public static let environmentVariable = "PROTFS_KEYCHAIN"
    /// How long the owner of each candidate mount is waited for.
    static let ownerWait = Duration.seconds(2)

    /// A path naming the keychain vault, and who named it (for the errors).
    public struct Named: Equatable, Sendable {
        public let path: String
        public let source: String

        public init(_ path: String, source: String) {
            self.path = path
            self.source = source
        }
    }

    /// The choice for this process: `given` (in code, on the command line; `givenSource` says
    /// how), then the environment, then the configuration file, then the caller's own vault.
    public static func current(given: String?, givenSource: String) -> KeychainChoice {
        current(named: given.flatMap { $0.isEmpty ? nil : Named($0, source: givenSource) } ?? namedOutsideCode())
    }

    /// The choice for this process when `named` names the vault (nil: the caller's own).
    static func current(named: Named?) -> KeychainChoice {
        let mounts = MountTable.protfsMountPoints()
        return choose(named: named, mounts: mounts, caller: getuid(), holding: { mountpoint(holding: $0, mounts: mounts) },
                      owner: { try? ControlClient(mountpoint: $0).status(within: ownerWait).owner })
    }

    /// The choice from its inputs: a named path is never replaced by another mount, and the
    /// default is the caller's only vault among `mounts` (`owner` answers nil for a mount whose
    /// daemon does not say).
    public static func choose(named: Named?, mounts: [String], caller: uid_t, holding: (String) -> String?,
                              owner: (String) -> UInt32?) -> KeychainChoice {
        if let named {
            guard let mountpoint = holding(named.path) else {
                return .none("\(named.source) names \(named.path), which is on no protfs mount")
            }
            return .found(mountpoint)
        }
        let distinct = Set(mounts).sorted()
        let advice = "name the keychain vault in \(environmentVariable) or ~/.config/protfs/keychain"
        guard !distinct.isEmpty else { return .none("there is no protfs mount on this machine; \(advice)") }
        let owners = distinct.map { (mountpoint: $0, owner: owner($0)) }
        let callers = owners.filter { $0.owner == caller }.map(\.mountpoint)
        switch callers.count {
        case 1: return .found(callers[0])
        case 0:
            let others = owners.map { "\($0.mountpoint) (" + ($0.owner.map { "uid \($0)" } ?? "owner unknown") + ")" }
            return .none("none of the protfs mounts is a vault of uid \(caller): \(others.joined(separator: ", ")); "
                         + "another user's vault is used only when named: \(advice)")
        default:
            return .none("there are \(callers.count) protfs vaults of uid \(caller) (\(callers.joined(separator: ", "))); \(advice)")
        }
    }

    /// `PROTFS_KEYCHAIN`, else the first line of the configuration file.
    static func namedOutsideCode() -> Named? {
        if let value = getenv(environmentVariable).map({ String(cString: $0) }), !value.isEmpty {
            return Named(value, source: environmentVariable)
        }
        let configHome = getenv("XDG_CONFIG_HOME").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (getenv("HOME").map { String(cString: $0) + "/.config" } ?? "")
        let file = configHome + "/protfs/keychain"
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
              let first = text.split(separator: "\n").first
        else { return nil }
        let line = String(first.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard !line.isEmpty else { return nil }
        return Named(line, source: file)
    }

    /// The protfs mount that holds `path` (a mount point, or any path inside one). A mount
    /// point is recognised without touching the mount (no request to its daemon).
    static func mountpoint(holding path: String, mounts: [String]) -> String? {
        let canonical = ControlSocketPath.canonicalMountpoint(path)
        if mounts.contains(canonical) { return canonical }
        guard let mount = MountTable.mount(holding: CanonicalPath.bestEffort(path)), mount.isProtfs else { return nil }
        return mount.mountpoint
    }
}
