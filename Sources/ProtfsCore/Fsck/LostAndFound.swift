import Glibc
import ProtfsFormat
import ProtfsSystem

/// `BACKING/protfs.lost+found`: where `fsck --repair` moves objects the mount cannot read,
/// byte for byte and under their backing names, so nothing is deleted and the mount shows
/// them no more (the `protfs.` namespace is hidden). `index.txt` beside them says, per
/// line, when each came, from which backing path and why; it names no plaintext, since the
/// backing directory must not give names away.
final class LostAndFound {
    static let indexName = "index.txt"

    private let root: FileDescriptor
    private var directory: OwnedDescriptor?

    init(root: FileDescriptor) { self.root = root }

    /// Moves `entry` out of `parent` (with a long entry's sidecar, if there is one) and
    /// records it; returns the name it has in `protfs.lost+found`.
    func move(_ entry: String, in parent: FileDescriptor, backingPath: String, reason: String) throws(Errno) -> String {
        let directory = try open()
        let name = try freeName(for: entry, in: directory)
        try parent.rename(entry, to: directory, name, flags: .noReplace)
        if BackingEntryName.classify(entry) == .longEntry {
            let sidecar = entry + ReservedNames.sidecarSuffix
            try? parent.rename(sidecar, to: directory, name + ReservedNames.sidecarSuffix, flags: .noReplace)
        }
        try appendToIndex("\(Self.timestamp())\t\(name)\t\(backingPath)\t\(reason)\n", in: directory)
        return name
    }

    /// The directory, made (mode 0700) on first use.
    private func open() throws(Errno) -> FileDescriptor {
        if let opened = directory?.borrowed { return opened }
        do {
            try root.makeDirectory(ReservedNames.lostAndFound, mode: 0o700)
        } catch {
            guard error == .exists else { throw error }
        }
        let opened = try OwnedDescriptor.open(ReservedNames.lostAndFound, in: root, [.readOnly, .directory, .nonBlocking])
        let view = opened.borrowed
        directory = consume opened
        return view
    }

    /// `entry`, or `entry~N` for the first N not taken (an earlier run may have moved an
    /// object of the same backing name), within the backing filesystem's name limit.
    private func freeName(for entry: String, in directory: FileDescriptor) throws(Errno) -> String {
        var candidate = entry
        var attempt = 0
        while true {
            do {
                _ = try directory.status(of: candidate)
            } catch {
                if error == .noEntry { return candidate }
                throw error
            }
            attempt += 1
            let suffix = "~\(attempt)"
            let room = BackingEntryName.maximumBackingNameLength - suffix.utf8.count - ReservedNames.sidecarSuffix.utf8.count
            candidate = String(decoding: Array(entry.utf8).prefix(room), as: UTF8.self) + suffix
        }
    }

    private func appendToIndex(_ line: String, in directory: FileDescriptor) throws(Errno) {
        // Opened only if it is a regular file: a device node planted in its place is never
        // opened for writing.
        let file: OwnedDescriptor
        do { file = try OwnedDescriptor.openRegularFile(Self.indexName, in: directory, .writeOnly) } catch .noEntry {
            file = try OwnedDescriptor.open(Self.indexName, in: directory, [.writeOnly, .create, .exclusive], mode: 0o600)
        }
        let index = file.borrowed
        let end = Int64(try index.status().st_size)
        try Array(line.utf8).withUnsafeBytes { bytes in Result { () throws(Errno) in try index.write(bytes, at: end) } }.get()
        try index.sync()
    }

    /// UTC, to the second: `2025-01-31T12:00:00Z`.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
