import ProtfsCrypto
import ProtfsSystem

/// Where a symlink is, which is what its target is sealed to (format 2): a target copied to
/// another symlink in the backing directory no longer opens.
public struct SymlinkLocation: Sendable, Equatable {
    public let vaultID: ObjectID
    /// The id of the directory that holds the symlink.
    public let directoryID: ObjectID
    /// The symlink's plaintext name there.
    public let name: [UInt8]

    public init(vaultID: ObjectID, directoryID: ObjectID, name: [UInt8]) {
        self.vaultID = vaultID
        self.directoryID = directoryID
        self.name = name
    }
}

/// Symlink targets on the backing store (FORMAT.md "Symlinks"), sealed under the filesystem
/// key's symlink subkey. Format 3 (the prefix `3.`, written for every new symlink) keeps the
/// target out of line in `BACKING/protfs.links/<link id hex>`, sealed to the symlink's
/// location, and the backing symlink points to `3.@<link id hex>` only: a rename re-seals the
/// blob and renames the backing symlink itself, which so keeps its inode. Format 2 (`2.`) sealed
/// the target to its location in the backing target itself (out of line when long), format 1
/// (no prefix) to nothing; both are still read, and a rename turns them into format 3.
public enum SymlinkTarget {
    /// PATH_MAX - 1.
    public static let maximumTargetLength = 4095
    /// Longest backing target stored inline (formats 1 and 2).
    public static let maximumInlineLength = 4000
    static let outOfLineMarker = "@"
    /// Never in base64url nor in `@<hex>`, so no format-1 target starts with it.
    static let formatTwoPrefix = "2."
    static let formatThreePrefix = "3."
    /// A format-3 blob holds one sealed target per location it opens at: two while a rename
    /// moves it.
    private static let maximumLocations = 2
    private static let movableAssociatedDataPrefix = Array("protfs symlink v3".utf8)

    public enum Format: Int, Sendable {
        /// Sealed to nothing: a target copied from another symlink opened.
        case unbound = 1
        /// Sealed to the symlink's location in the backing target itself.
        case bound = 2
        /// Sealed to the symlink's location in its own blob, so a rename keeps the symlink.
        case movable = 3
    }

    /// Seals `target` for the symlink at `location`, in format 3, and returns what the
    /// backing symlink should point to; the blob is written (atomically, synced) before this
    /// returns, so the caller creates the symlink after it.
    public static func store(target: [UInt8], at location: SymlinkLocation, keys: FilesystemKeys,
                             root: FileDescriptor) throws(Errno) -> String {
        guard !target.isEmpty else { throw .noEntry }
        guard target.count <= maximumTargetLength else { throw .nameTooLong }
        let linkID = ObjectID.random()
        try writeMovableBlob(linkID, target: target, at: [location], keys: keys, root: root)
        return formatThreePrefix + outOfLineMarker + linkID.description
    }

    /// Before a format-3 symlink is renamed from `source` to `destination`: its blob is sealed
    /// for both, so a crash on either side of the rename leaves a symlink that opens.
    public static func admit(_ backingTarget: String, from source: SymlinkLocation, to destination: SymlinkLocation,
                             keys: FilesystemKeys, root: FileDescriptor) throws(Errno) {
        try reseal(backingTarget, from: source, for: [source, destination], keys: keys, root: root)
    }

    /// After the rename: the blob is sealed for `location` only, so the former place no
    /// longer opens it.
    public static func settle(_ backingTarget: String, at location: SymlinkLocation, keys: FilesystemKeys,
                              root: FileDescriptor) throws(Errno) {
        try reseal(backingTarget, from: location, for: [location], keys: keys, root: root)
    }

    private static func reseal(_ backingTarget: String, from source: SymlinkLocation, for locations: [SymlinkLocation],
                               keys: FilesystemKeys, root: FileDescriptor) throws(Errno) {
        guard format(of: backingTarget) == .movable, let linkID = linkID(of: backingTarget) else { throw .invalid }
        var target = try load(backingTarget: backingTarget, at: source, keys: keys, root: root)
        defer { secureZero(&target) }
        try writeMovableBlob(linkID, target: target, at: locations, keys: keys, root: root)
    }

    private static func writeMovableBlob(_ linkID: ObjectID, target: [UInt8], at locations: [SymlinkLocation],
                                         keys: FilesystemKeys, root: FileDescriptor) throws(Errno) {
        var blob = [UInt8(locations.count)]
        for location in locations {
            blob += XChaCha20Poly1305.seal(target, authenticating: movableAssociatedData(linkID: linkID, at: location),
                                           with: keys.symlinkTarget)
        }
        try openLinksDirectory(in: root, creating: true).closeAfter { (links) throws(Errno) in
            try links.writeFileAtomically(linkID.description, contents: blob)
        }
    }

    /// A format-3 blob's sealed targets (one per location, all of one length); nil when it
    /// cannot be one.
    private static func movableRecords(_ blob: [UInt8]) -> [ArraySlice<UInt8>]? {
        guard let count = blob.first.map(Int.init), (1...maximumLocations).contains(count),
              (blob.count - 1) % count == 0 else { return nil }
        let recordLength = (blob.count - 1) / count
        guard isPlausible(sealedLength: recordLength) else { return nil }
        return (0..<count).map { blob[(1 + $0 * recordLength)..<(1 + ($0 + 1) * recordLength)] }
    }

    /// Format 3: `"protfs symlink v3" || vault id || link id || directory id || name`.
    static func movableAssociatedData(linkID: ObjectID, at location: SymlinkLocation) -> [UInt8] {
        movableAssociatedDataPrefix + location.vaultID.bytes + linkID.bytes + location.directoryID.bytes + location.name
    }

    /// The plaintext target of the symlink at `location`; `EIO` if the backing target or its
    /// blob is malformed, missing, or fails authentication (a format-2 target sealed for
    /// another location, or read where the location is not known, included).
    public static func load(backingTarget: String, at location: SymlinkLocation?, keys: FilesystemKeys,
                            root: FileDescriptor) throws(Errno) -> [UInt8] {
        guard let (format, body) = split(backingTarget) else { throw .io }
        let linkID = self.linkID(ofBody: body)
        if format == .movable {
            guard let linkID, let location,
                  let records = movableRecords(try blob(linkID, root: root, limit: movableBlobLimit)) else { throw .io }
            let associatedData = movableAssociatedData(linkID: linkID, at: location)
            for record in records {
                if let target = try? XChaCha20Poly1305.open(Array(record), authenticating: associatedData, with: keys.symlinkTarget) {
                    return target
                }
            }
            throw .io
        }
        let sealed: [UInt8]
        if let linkID {
            sealed = try blob(linkID, root: root, limit: maximumTargetLength + XChaCha20Poly1305.overhead)
        } else {
            guard let decoded = Base64URL.decode(String(body)) else { throw .io }
            sealed = decoded
        }
        let associatedData: [UInt8]
        switch format {
        case .unbound: associatedData = Array("protfs symlink v1".utf8) + (linkID?.bytes ?? [])
        case .bound, .movable:
            guard let location else { throw .io }
            associatedData = Self.associatedData(linkID: linkID, at: location)
        }
        guard isPlausible(sealedLength: sealed.count),
              let target = try? XChaCha20Poly1305.open(sealed, authenticating: associatedData, with: keys.symlinkTarget)
        else { throw .io }
        return target
    }

    private static let movableBlobLimit = 1 + maximumLocations * (maximumTargetLength + XChaCha20Poly1305.overhead)

    /// The format of a backing target, without any key; nil when it cannot be one of ours.
    public static func format(of backingTarget: String) -> Format? { split(backingTarget)?.format }

    /// Whether a backing target is marked with a version this build does not know (`N.`,
    /// N > 3): made by a newer protfs, so the mount cannot read it and fsck leaves it alone.
    public static func isNewerFormat(_ backingTarget: String) -> Bool {
        let marker = backingTarget.utf8.prefix { $0 != UInt8(ascii: ".") }
        guard marker.count < backingTarget.utf8.count, (1...4).contains(marker.count),
              marker.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let version = Int(String(decoding: marker, as: UTF8.self)) else { return false }
        return version > Format.movable.rawValue
    }

    /// The target's length for getattr's `st_size`, from the backing target's length or the
    /// blob's size, without any key; nil when it cannot be one of ours.
    public static func plaintextLength(backingTarget: String, root: FileDescriptor) -> Int? {
        guard let (format, body) = split(backingTarget) else { return nil }
        let sealedLength: Int
        if format == .movable {
            guard let linkID = linkID(ofBody: body), let blob = try? blob(linkID, root: root, limit: movableBlobLimit),
                  let records = movableRecords(blob) else { return nil }
            sealedLength = records[0].count
        } else if let linkID = linkID(ofBody: body) {
            guard let links = try? openLinksDirectory(in: root, creating: false),
                  let status = try? links.borrowed.status(of: linkID.description), status.isRegularFile else { return nil }
            sealedLength = Int(status.st_size)
        } else {
            guard let length = Base64URL.decodedLength(ofCharacterCount: body.utf8.count) else { return nil }
            sealedLength = length
        }
        return isPlausible(sealedLength: sealedLength) ? sealedLength - XChaCha20Poly1305.overhead : nil
    }

    /// Removes an out-of-line target's blob, once the last link to its symlink is gone. A
    /// blob that cannot be removed is only an orphan for fsck, so failures are not reported.
    public static func removeBlob(backingTarget: String, root: FileDescriptor) {
        guard let linkID = linkID(of: backingTarget),
              let links = try? openLinksDirectory(in: root, creating: false) else { return }
        try? links.borrowed.removeFile(linkID.description)
    }

    /// Format 2 (written by earlier builds; tests make it with `FormatTwoSymlinkTarget`):
    /// `"protfs symlink v2" || vault id || directory id || form (0 inline, 1 out
    /// of line) || link id (zeros inline) || name`. Every field but the last has a fixed
    /// length, so no two locations or forms give the same bytes.
    package static func associatedData(linkID: ObjectID?, at location: SymlinkLocation) -> [UInt8] {
        Array("protfs symlink v2".utf8) + location.vaultID.bytes + location.directoryID.bytes
            + [linkID == nil ? 0 : 1] + (linkID?.bytes ?? [UInt8](repeating: 0, count: ObjectID.byteCount)) + location.name
    }

    private static func split(_ backingTarget: String) -> (format: Format, body: Substring)? {
        if backingTarget.hasPrefix(formatTwoPrefix) { return (.bound, backingTarget.dropFirst(formatTwoPrefix.count)) }
        if backingTarget.hasPrefix(formatThreePrefix) { return (.movable, backingTarget.dropFirst(formatThreePrefix.count)) }
        // A `.` anywhere else is no format we know (a newer one, or damage).
        return backingTarget.contains(".") ? nil : (.unbound, backingTarget[...])
    }

    static func isPlausible(sealedLength: Int) -> Bool {
        (1...maximumTargetLength).contains(sealedLength - XChaCha20Poly1305.overhead)
    }

    /// The largest blob in `protfs.links`: a format-3 blob sealed for two locations.
    package static var maximumBlobByteCount: Int { movableBlobLimit }

    /// Whether a blob of `byteCount` bytes could hold a sealed target (without any key): one
    /// sealed target (format 2), or a count byte and one or two of them (format 3).
    package static func isPlausibleBlob(byteCount: Int) -> Bool {
        isPlausible(sealedLength: byteCount)
            || (1...maximumLocations).contains { count in
                (byteCount - 1) % count == 0 && isPlausible(sealedLength: (byteCount - 1) / count)
            }
    }

    /// The link id of an out-of-line target, `@<32 lowercase hex digits>` in any format,
    /// else nil (fsck collects them to find blobs no symlink refers to).
    package static func linkID(of backingTarget: String) -> ObjectID? {
        split(backingTarget).flatMap { linkID(ofBody: $0.body) }
    }

    private static func linkID(ofBody body: Substring) -> ObjectID? {
        let characters = Array(body.utf8)
        guard characters.count == 1 + 2 * ObjectID.byteCount,
              characters.first == UInt8(ascii: "@") else { return nil }
        var bytes: [UInt8] = []
        var index = 1
        while index < characters.count {
            guard let high = hexValue(characters[index]), let low = hexValue(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return ObjectID(bytes: bytes)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static func blob(_ linkID: ObjectID, root: FileDescriptor, limit maximumSize: Int) throws(Errno) -> [UInt8] {
        do throws(Errno) {
            let links = try openLinksDirectory(in: root, creating: false)
            let file = try OwnedDescriptor.openRegularFile(linkID.description, in: links.borrowed)
            guard try file.borrowed.status().st_size <= maximumSize else { throw Errno.io }
            return try file.borrowed.readAll(limit: maximumSize)
        } catch {
            throw .io
        }
    }

    static func openLinksDirectory(in root: FileDescriptor, creating: Bool) throws(Errno) -> OwnedDescriptor {
        if creating {
            do throws(Errno) {
                try root.makeDirectory(ReservedNames.links, mode: 0o700)
            } catch {
                guard error == .exists else { throw error }
            }
        }
        do {
            return try OwnedDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory, .nonBlocking])
        } catch .loop, .notDirectory {
            // Something planted in its place: never followed, and damage like any other.
            throw .io
        }
    }
}
