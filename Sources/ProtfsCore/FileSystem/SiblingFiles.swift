import Glibc
import ProtfsFormat
import ProtfsSystem

/// The vault files of one backing directory in the order they were made: inode order.
/// Files created one after another get consecutive inodes, and their data lies together on
/// the disk; and readers going through a directory (`cat *`, a build, a copy read back)
/// mostly take them in the order they were written.
struct SiblingFiles: Equatable {
    struct File: Equatable {
        let inode: UInt64
        let name: String
    }

    /// By inode.
    let files: [File]

    /// The regular vault files among `entries` (never the daemon's own files or sidecars).
    init(_ entries: [DirectoryEntry]) {
        files = entries.filter { $0.type == UInt8(DT_REG) && ReservedNames.isVaultEntry($0.name) }
            .map { File(inode: $0.inode, name: $0.name) }
            .sorted { $0.inode < $1.inode }
    }

    /// The vault files of `directory`, or nil when it has more than `limit` entries (read no
    /// further: a huge directory is left alone rather than listed whole).
    static func list(_ directory: FileDescriptor, limit: Int) throws(Errno) -> SiblingFiles? {
        var entries: [DirectoryEntry] = []
        var tooMany = false
        try DirectoryStream(directory, movingAccessTime: false).read(from: 0) { entry, _ in
            guard entries.count < limit else {
                tooMany = true
                return false
            }
            if entry.name != "." && entry.name != ".." { entries.append(entry) }
            return true
        }
        return tooMany ? nil : SiblingFiles(entries)
    }

    /// What to read ahead once the file `opened` is opened.
    struct Plan: Equatable {
        /// Names to read ahead, in inode order.
        let names: [String]
        /// The last file read ahead so far (nothing at or before it is read ahead again).
        let readThrough: UInt64?
        /// The file whose opening calls for the next plan: half-way through the window, so the
        /// next files are on their way before the reader gets to them.
        let nextPlanAt: UInt64
    }

    /// The files of the `window` after `opened` that are past `readThrough` (read ahead
    /// already); nil when `opened` is not one of them (a stale listing, a moved file).
    func plan(after opened: UInt64, window: Int, readThrough: UInt64?) -> Plan? {
        let index = partitioningIndex { $0.inode >= opened }
        guard index < files.count, files[index].inode == opened else { return nil }
        let end = min(index + 1 + window, files.count)
        let start = max(index + 1, readThrough.map { done in partitioningIndex { $0.inode > done } } ?? 0)
        let chosen = start < end ? files[start..<end] : []
        return Plan(names: chosen.map(\.name), readThrough: chosen.last?.inode ?? readThrough,
                    nextPlanAt: files[min(index + window / 2, files.count - 1)].inode)
    }

    /// The first index whose file satisfies `isPast` (files are by inode, `isPast` monotonic).
    private func partitioningIndex(_ isPast: (File) -> Bool) -> Int {
        var low = 0, high = files.count
        while low < high {
            let middle = (low + high) / 2
            if isPast(files[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
