import Foundation

/// `protfsctl item ...` on a mounted TestVault, as root or as another uid (setpriv), and the
/// record files of the backing directory.
extension TestVault {
    /// `protfsctl item VERB MOUNTPOINT ARGS`, as `uid` when given (through setpriv, no groups).
    @discardableResult
    func item(_ verb: String, _ arguments: [String], as uid: UInt32? = nil, stdin: String? = nil) -> CommandResult {
        let command = ["item", verb, mountpoint] + arguments
        guard let uid else { return protfsctl(command, stdin: stdin) }
        return CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", Self.protfsctl] + command,
                                 stdin: stdin)
    }

    /// Writes `bytes` to a file in the vault's temporary directory (outside the mount) and
    /// returns its path, for `--secret-file`.
    func secretFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = root.path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    var itemsDirectory: String { backing + "/protfs.items" }

    /// The record files now in `protfs.items`.
    func itemRecords() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: itemsDirectory)) ?? [])
    }

    /// `protfsctl status --json`'s `items`, for `uid` when given.
    func itemCount(as uid: UInt32? = nil) throws -> Int? {
        let arguments = ["status", mountpoint, "--json"]
        let result = uid.map {
            CommandRunner.run("/usr/bin/setpriv", ["--reuid=\($0)", "--regid=\($0)", "--clear-groups", Self.protfsctl] + arguments)
        } ?? protfsctl(arguments)
        guard result.succeeded, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("status --json: \(result.stderr)")
        }
        return object["items"] as? Int
    }
}
