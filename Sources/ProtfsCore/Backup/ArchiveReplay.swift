import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Reads an archive's records in order and checks each (paths, extents, headers under the
/// transport key), handing them to `maker` when restoring; with no maker it is
/// `backup --verify`. The stream is authenticated chunk by chunk, so a record is only acted
/// on once its bytes have been; a failure later leaves the caller to remove what was made.
final class ArchiveReplay {
    private let reader: BackupStreamReader
    private let transport: ClassKeyring
    private let maker: RestoreMaker?
    private(set) var entryCount: UInt64 = 0
    /// The bytes of file contents replayed so far.
    private(set) var byteCount: UInt64 = 0
    /// Called after every entry with the entries and bytes so far (`protfs restore`'s progress).
    private let progress: (_ objects: UInt64, _ bytes: UInt64) -> Void

    init(reader: BackupStreamReader, transport: ClassKeyring, maker: RestoreMaker?,
         progress: @escaping (_ objects: UInt64, _ bytes: UInt64) -> Void = { _, _ in }) {
        self.reader = reader
        self.transport = transport
        self.maker = maker
        self.progress = progress
    }

    func run() throws(BackupError) {
        while true {
            guard let kind = BackupEntryKind(rawValue: try reader.read(1)[0]) else { throw .damaged("an entry of unknown kind") }
            let path = try reader.readPath()
            guard kind == .end || (path.isEmpty == (entryCount == 0)) else { throw .damaged("the root is not the first entry") }
            switch kind {
            case .directory:
                // Read before the call: optional chaining would skip its arguments without a target.
                let attributes = try reader.readAttributes()
                let extendedAttributes = try reader.readExtendedAttributes()
                try maker?.add(.directory(path, attributes, extendedAttributes))
            case .file:
                try replayFile(path)
            case .symlink:
                let attributes = try reader.readAttributes()
                guard let link = String(validating: try reader.readBytes(lengthBytes: 2), as: UTF8.self) else {
                    throw .damaged("a symlink target is not UTF-8")
                }
                try maker?.add(.symlink(path, target: link, attributes))
            case .node:
                let attributes = try reader.readAttributes()
                let device = try reader.readInteger(UInt64.self)
                try maker?.add(.node(path, attributes, device: device))
            case .hardLink:
                let first = try reader.readPath()
                try maker?.add(.hardLink(path, to: first))
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

    private func replayFile(_ path: String) throws(BackupError) {
        let attributes = try reader.readAttributes()
        let extendedAttributes = try reader.readExtendedAttributes()
        let size = try reader.readInteger(UInt64.self)
        try maker?.add(.beginFile(path, mode: attributes.mode, extendedAttributes))
        var end: UInt64 = 0
        let hasHeader = Self.hasHeader(path)
        while true {
            let offset = try reader.readInteger(UInt64.self)
            let length = try reader.readInteger(UInt64.self)
            if length == 0 { break }
            guard length <= UInt64(VaultBackup.pieceByteCount), offset >= end, offset + length <= size else {
                throw .damaged("a file's data is out of order")
            }
            if hasHeader && end == 0 {
                guard offset == 0, length == UInt64(FileHeader.byteCount),
                      let header = try? FileHeader.decode(try reader.read(Int(length)), keyring: transport) else {
                    throw .damaged("a file header does not authenticate")
                }
                if let maker { try maker.add(.write(header.moved(to: maker.keyring).encoded(), at: offset)) }
            } else {
                var at = offset
                try reader.read(Int(length)) { (piece) throws(BackupError) in
                    try maker?.add(.write(Array(piece), at: at))
                    at += UInt64(piece.count)
                }
            }
            end = offset + length
            byteCount += length
        }
        guard !hasHeader || end > 0 else { throw .damaged("a file has no header") }
        try maker?.add(.endFile(path, size: size, written: end, attributes))
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
