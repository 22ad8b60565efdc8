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

/// Symlink targets on the backing store (FORMAT.md "Symlinks"): sealed under the filesystem
/// key's symlink subkey, stored as the backing symlink's own target when that fits in 4000
/// bytes, else out of line in `BACKING/protfs.links/<link id hex>` with the backing target
/// `@<link id hex>`, so every target up to PATH_MAX - 1 bytes works. Format 2 (the prefix
/// `2.`) seals the target to the symlink's location; format 1 (no prefix, written by earlier
/// builds) to nothing, and is still read.
public enum SymlinkTarget {
    /// PATH_MAX - 1.
    public static let maximumTargetLength = 4095
    /// Longest backing target stored inline.
    public static let maximumInlineLength = 4000
    private static let outOfLineMarker = "@"
    /// Never in base64url nor in `@<hex>`, so no format-1 target starts with it.
    static let formatTwoPrefix = "2."

    public enum Format: Int, Sendable {
        /// Sealed to nothing: a target copied from another symlink opened.
        case unbound = 1
        /// Sealed to the symlink's location.
        case bound = 2
    }

    /// Seals `target` for the symlink at `location`, in format 2, and returns what the
    /// backing symlink should point to; a long target's blob is written (atomically) before
    /// this returns, so the caller creates the symlink after it.
    public static func store(target: [UInt8], at location: SymlinkLocation, keys: FilesystemKeys,
                             root: FileDescriptor) throws(Errno) -> String {
        guard !target.isEmpty else { throw .noEntry }
        guard target.count <= maximumTargetLength else { throw .nameTooLong }
        let sealedLength = target.count + XChaCha20Poly1305.overhead
        if formatTwoPrefix.utf8.count + Base64URL.encodedLength(ofByteCount: sealedLength) <= maximumInlineLength {
            let sealed = XChaCha20Poly1305.seal(target, authenticating: associatedData(linkID: nil, at: location),
                                                with: keys.symlinkTarget)
            return formatTwoPrefix + Base64URL.encode(sealed)
        }
        let linkID = ObjectID.random()
        let sealed = XChaCha20Poly1305.seal(target, authenticating: associatedData(linkID: linkID, at: location),
                                            with: keys.symlinkTarget)
        let links = try openLinksDirectory(in: root, creating: true)
        defer { links.close() }
        try links.writeFileAtomically(linkID.description, contents: sealed)
        return formatTwoPrefix + outOfLineMarker + linkID.description
    }

    /// The plaintext target of the symlink at `location`; `EIO` if the backing target or its
    /// blob is malformed, missing, or fails authentication (a format-2 target sealed for
    /// another location, or read where the location is not known, included).
    public static func load(backingTarget: String, at location: SymlinkLocation?, keys: FilesystemKeys,
                            root: FileDescriptor) throws(Errno) -> [UInt8] {
        guard let (format, body) = split(backingTarget) else { throw .io }
        let sealed: [UInt8]
        let linkID = self.linkID(ofBody: body)
        if let linkID {
            sealed = try blob(linkID, root: root)
        } else {
            guard let decoded = Base64URL.decode(String(body)) else { throw .io }
            sealed = decoded
        }
        let associatedData: [UInt8]
        switch format {
        case .unbound: associatedData = Array("protfs symlink v1".utf8) + (linkID?.bytes ?? [])
        case .bound:
            guard let location else { throw .io }
            associatedData = Self.associatedData(linkID: linkID, at: location)
        }
        guard isPlausible(sealedLength: sealed.count),
              let target = try? XChaCha20Poly1305.open(sealed, authenticating: associatedData, with: keys.symlinkTarget)
        else { throw .io }
        return target
    }

    /// The format of a backing target, without any key; nil when it cannot be one of ours.
    public static func format(of backingTarget: String) -> Format? { split(backingTarget)?.format }

    /// Whether a backing target is marked with a version this build does not know (`N.`,
    /// N > 2): made by a newer protfs, so the mount cannot read it and fsck leaves it alone.
    public static func isNewerFormat(_ backingTarget: String) -> Bool {
        let marker = backingTarget.utf8.prefix { $0 != UInt8(ascii: ".") }
        guard marker.count < backingTarget.utf8.count, (1...4).contains(marker.count),
              marker.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let version = Int(String(decoding: marker, as: UTF8.self)) else { return false }
        return version > Format.bound.rawValue
    }

    /// The target's length for getattr's `st_size`, from the backing target's length or the
    /// blob's size, without any key; nil when it cannot be one of ours.
    public static func plaintextLength(backingTarget: String, root: FileDescriptor) -> Int? {
        guard let (_, body) = split(backingTarget) else { return nil }
        let sealedLength: Int
        if let linkID = linkID(ofBody: body) {
            guard let links = try? openLinksDirectory(in: root, creating: false) else { return nil }
            defer { links.close() }
            guard let status = try? links.status(of: linkID.description), status.isRegularFile else { return nil }
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
        defer { links.close() }
        try? links.removeFile(linkID.description)
    }

    /// Format 2: `"protfs symlink v2" || vault id || directory id || form (0 inline, 1 out
    /// of line) || link id (zeros inline) || name`. Every field but the last has a fixed
    /// length, so no two locations or forms give the same bytes.
    static func associatedData(linkID: ObjectID?, at location: SymlinkLocation) -> [UInt8] {
        Array("protfs symlink v2".utf8) + location.vaultID.bytes + location.directoryID.bytes
            + [linkID == nil ? 0 : 1] + (linkID?.bytes ?? [UInt8](repeating: 0, count: ObjectID.byteCount)) + location.name
    }

    private static func split(_ backingTarget: String) -> (format: Format, body: Substring)? {
        if backingTarget.hasPrefix(formatTwoPrefix) { return (.bound, backingTarget.dropFirst(formatTwoPrefix.count)) }
        // A `.` anywhere else is no format we know (a newer one, or damage).
        return backingTarget.contains(".") ? nil : (.unbound, backingTarget[...])
    }

    private static func isPlausible(sealedLength: Int) -> Bool {
        (1...maximumTargetLength).contains(sealedLength - XChaCha20Poly1305.overhead)
    }

    /// The largest blob in `protfs.links`: a sealed target of the longest length.
    package static let maximumBlobByteCount = maximumTargetLength + XChaCha20Poly1305.overhead

    /// Whether a blob of `byteCount` bytes could hold a sealed target (without any key).
    package static func isPlausibleBlob(byteCount: Int) -> Bool { isPlausible(sealedLength: byteCount) }

    /// The link id of an out-of-line target, `@<32 lowercase hex digits>` in either format,
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

    private static func blob(_ linkID: ObjectID, root: FileDescriptor) throws(Errno) -> [UInt8] {
        let maximumSize = maximumBlobByteCount
        do throws(Errno) {
            let links = try openLinksDirectory(in: root, creating: false)
            defer { links.close() }
            let file = try FileDescriptor.openRegularFile(linkID.description, in: links)
            defer { file.close() }
            guard try file.status().st_size <= maximumSize else { throw Errno.io }
            return try file.readAll(limit: maximumSize)
        } catch {
            throw .io
        }
    }

    private static func openLinksDirectory(in root: FileDescriptor, creating: Bool) throws(Errno) -> FileDescriptor {
        if creating {
            do throws(Errno) {
                try root.makeDirectory(ReservedNames.links, mode: 0o700)
            } catch {
                guard error == .exists else { throw error }
            }
        }
        do {
            return try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory, .nonBlocking])
        } catch .loop, .notDirectory {
            // Something planted in its place: never followed, and damage like any other.
            throw .io
        }
    }
}
