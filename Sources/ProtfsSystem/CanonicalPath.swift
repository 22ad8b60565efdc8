import Glibc

/// Absolute paths without symlinks, `.`, `..` or repeated slashes: how the daemon and
/// `protfsctl` agree on the name of a mount point.
public enum CanonicalPath {
    /// `realpath(3)`, or nil when some component cannot be resolved.
    public static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `resolved(path)` when that works. Otherwise (a dead mount answers ENOTCONN, a missing
    /// path ENOENT) the parent resolved with the last component appended, and failing that
    /// the absolute path normalised without touching the filesystem.
    public static func bestEffort(_ path: String) -> String {
        resolved(path) ?? resolvingParent(path) ?? lexicallyNormalized(path)
    }

    /// The parent resolved and the last component appended as it is: the path of the object
    /// itself when it is a symlink; nil when the parent cannot be resolved.
    public static func resolvingParent(_ path: String) -> String? {
        let normalized = lexicallyNormalized(path)
        guard normalized != "/", let slash = normalized.lastIndex(of: "/") else { return normalized }
        let parent = slash == normalized.startIndex ? "/" : String(normalized[..<slash])
        guard let resolvedParent = resolved(parent) else { return nil }
        return (resolvedParent == "/" ? "" : resolvedParent) + "/" + normalized[normalized.index(after: slash)...]
    }

    /// Makes `path` absolute (against the working directory) and removes `.`, `..` and
    /// repeated slashes by text alone.
    public static func lexicallyNormalized(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        var components: [Substring] = []
        for component in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    private static func currentDirectory() -> String {
        guard let cwd = getcwd(nil, 0) else { return "/" }
        defer { free(cwd) }
        return String(cString: cwd)
    }
}
