import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Reads an archive's records in order and checks each (paths, extents, headers under the
/// transport key), screens it (`ArchiveScreen`: what a restore will not make as the archive
/// says) and hands what passes to `maker` when restoring; with no maker it is
/// `backup --verify`. The stream is authenticated chunk by chunk, so a record is only acted
/// on once its bytes have been; a failure later leaves the caller to remove what was made.
final class ArchiveReplay {
    private let reader: BackupStreamReader
    private let transport: ClassKeyring
    private let maker: RestoreMaker?
    private(set) var screen: ArchiveScreen
    private(set) var entryCount: UInt64 = 0
    /// The bytes of file contents replayed so far.
    private(set) var byteCount: UInt64 = 0
    /// Called after every entry with the entries and bytes so far (`protfs restore`'s progress).
    private let progress: (_ objects: UInt64, _ bytes: UInt64) -> Void

    init(reader: BackupStreamReader, transport: ClassKeyring, screen: ArchiveScreen, maker: RestoreMaker?,
         progress: @escaping (_ objects: UInt64, _ bytes: UInt64) -> Void = { _, _ in }) {
        self.reader = reader
        self.transport = transport
        self.screen = screen
        self.maker = maker
        self.progress = progress
    }

    func run() throws(BackupError) {
        while true {
            guard let kind = BackupEntryKind(rawValue: try reader.read(1)[0]) else { throw .damaged("an entry of unknown kind") }
            let path = try reader.readPath()
            guard kind == .end || (path.isEmpty == (entryCount == 0)) else { throw .damaged("the root is not the first entry") }
            guard entryCount > 0 || kind == .directory else { throw .damaged("the root is not a directory") }
            switch kind {
            case .directory:
                // Read before the call: optional chaining would skip its arguments without a target.
                let attributes = try reader.readAttributes()
                let extendedAttributes = try reader.readExtendedAttributes()
                if let kept = screen.directory(path, attributes) { try maker?.add(.directory(path, kept, extendedAttributes)) }
            case .file:
                try replayFile(path)
            case .symlink:
                let attributes = try reader.readAttributes()
                guard let link = String(validating: try reader.readBytes(lengthBytes: 2), as: UTF8.self) else {
                    throw .damaged("a symlink target is not UTF-8")
                }
                if let kept = screen.symlink(path, attributes) { try maker?.add(.symlink(path, target: link, kept)) }
            case .node:
                let attributes = try reader.readAttributes()
                let device = try reader.readInteger(UInt64.self)
                if let kept = screen.node(path, attributes, device: device) { try maker?.add(.node(path, kept, device: device)) }
            case .hardLink:
                let first = try reader.readPath()
                if screen.hardLink(path, to: first) { try maker?.add(.hardLink(path, to: first)) }
            case .end:
                guard path.isEmpty, try reader.readInteger(UInt64.self) == entryCount else {
                    throw .damaged("its end record does not match its entries")
                }
                try reader.finish()
                return
            }
            entryCount += 1
            progress(entryCount, byteCount)
        }
    }

    /// A file's entry and extents. One the screen leaves out is read and checked all the
    /// same; a record of the daemon's folders is gathered (at most a record's size) and made
    /// only once its bytes are known to be one.
    private func replayFile(_ path: String) throws(BackupError) {
        let attributes = try reader.readAttributes()
        let extendedAttributes = try reader.readExtendedAttributes()
        let size = try reader.readInteger(UInt64.self)
        // Sizes and offsets are the author's: none may overflow where they become an off_t.
        guard size <= UInt64(Int64.max) else { throw .damaged("a file is larger than any file can be") }
        let verdict = screen.file(path, attributes, size: size)
        var record: [UInt8] = []
        switch verdict {
        case .make(let kept): try maker?.add(.beginFile(path, mode: kept.mode, extendedAttributes))
        case .record: record = [UInt8](repeating: 0, count: Int(size))
        case .leaveOut: break
        }
        var end: UInt64 = 0
        let hasHeader = Self.hasHeader(path)
        while true {
            let offset = try reader.readInteger(UInt64.self)
            let length = try reader.readInteger(UInt64.self)
            if length == 0 { break }
            guard length <= UInt64(VaultBackup.pieceByteCount), offset >= end, offset <= size, length <= size - offset else {
                throw .damaged("a file's data is out of order")
            }
            if hasHeader && end == 0 {
                guard offset == 0, length == UInt64(FileHeader.byteCount),
                      let header = try? FileHeader.decode(try reader.read(Int(length)), keyring: transport) else {
                    throw .damaged("a file header does not authenticate")
                }
                if let maker, case .make = verdict { try maker.add(.write(header.moved(to: maker.keyring).encoded(), at: offset)) }
            } else {
                var at = offset
                try reader.read(Int(length)) { (piece) throws(BackupError) in
                    switch verdict {
                    case .make: try maker?.add(.write(Array(piece), at: at))
                    case .record: record.replaceSubrange(Int(at) ..< Int(at) + piece.count, with: piece)
                    case .leaveOut: break
                    }
                    at += UInt64(piece.count)
                }
            }
            end = offset + length
            byteCount += length
        }
        guard !hasHeader || end > 0 else { throw .damaged("a file has no header") }
        switch verdict {
        case .make(let kept): try maker?.add(.endFile(path, size: size, written: end, kept))
        case let .record(kept, folder, name):
            guard screen.accepts(record, path: path, folder: folder, name: name), let maker else { return }
            try maker.add(.beginFile(path, mode: kept.mode, extendedAttributes))
            try maker.add(.write(record, at: 0))
            try maker.add(.endFile(path, size: size, written: size, kept))
        case .leaveOut: break
        }
    }

    /// Files in vault directories have headers; the records of `protfs.items` and
    /// `protfs.links` do not.
    static func hasHeader(_ path: String) -> Bool {
        guard !path.isEmpty else { return false }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ReservedNames.isVaultEntry(path) }
        let top = path[..<path.utf8.firstIndex(of: UInt8(ascii: "/"))!]
        if top == ReservedNames.items || top == ReservedNames.links { return false }
        return ReservedNames.isVaultEntry(String(path[path.utf8.index(after: slash)...]))
    }
}
