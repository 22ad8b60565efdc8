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
    /// path ENOENT) the parent is resolved and the last component appended, and failing
    /// that the absolute path is normalised without touching the filesystem.
    public static func bestEffort(_ path: String) -> String {
        if let resolved = resolved(path) { return resolved }
        let normalized = lexicallyNormalized(path)
        guard let slash = normalized.lastIndex(of: "/"), normalized != "/" else { return normalized }
        let parent = slash == normalized.startIndex ? "/" : String(normalized[..<slash])
        guard let resolvedParent = resolved(parent) else { return normalized }
        let last = normalized[normalized.index(after: slash)...]
        return (resolvedParent == "/" ? "" : resolvedParent) + "/" + last
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
