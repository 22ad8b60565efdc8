import ProtfsCrypto
import ProtfsSystem

/// Symlink targets on the backing store (FORMAT.md "Symlinks"): sealed under the filesystem
/// key's symlink subkey, stored as the backing symlink's own target when that fits in 4000
/// bytes, else out of line in `BACKING/protfs.links/<link id hex>` with the backing target
/// `@<link id hex>`, so every target up to PATH_MAX - 1 bytes works.
public enum SymlinkTarget {
    /// PATH_MAX - 1.
    public static let maximumTargetLength = 4095
    /// Longest backing target stored inline.
    public static let maximumInlineLength = 4000
    private static let associatedData = Array("protfs symlink v1".utf8)
    private static let outOfLineMarker = "@"

    /// Seals `target` and returns what the backing symlink should point to; a long target's
    /// blob is written (atomically) before this returns, so the caller creates the symlink
    /// after it.
    public static func store(target: [UInt8], keys: FilesystemKeys, root: FileDescriptor) throws(Errno) -> String {
        guard !target.isEmpty else { throw .noEntry }
        guard target.count <= maximumTargetLength else { throw .nameTooLong }
        let sealedLength = target.count + XChaCha20Poly1305.overhead
        if Base64URL.encodedLength(ofByteCount: sealedLength) <= maximumInlineLength {
            return Base64URL.encode(XChaCha20Poly1305.seal(target, authenticating: associatedData, with: keys.symlinkTarget))
        }
        let linkID = ObjectID.random()
        let sealed = XChaCha20Poly1305.seal(target, authenticating: associatedData + linkID.bytes, with: keys.symlinkTarget)
        let links = try openLinksDirectory(in: root, creating: true)
        defer { links.close() }
        try links.writeFileAtomically(linkID.description, contents: sealed)
        return outOfLineMarker + linkID.description
    }

    /// The plaintext target; `EIO` if the backing target or its blob is malformed, missing,
    /// or fails authentication.
    public static func load(backingTarget: String, keys: FilesystemKeys, root: FileDescriptor) throws(Errno) -> [UInt8] {
        let sealed: [UInt8]
        var associatedData = Self.associatedData
        if let linkID = linkID(of: backingTarget) {
            sealed = try blob(linkID, root: root)
            associatedData += linkID.bytes
        } else {
            guard let decoded = Base64URL.decode(backingTarget) else { throw .io }
            sealed = decoded
        }
        guard isPlausible(sealedLength: sealed.count),
              let target = try? XChaCha20Poly1305.open(sealed, authenticating: associatedData, with: keys.symlinkTarget)
        else { throw .io }
        return target
    }

    /// The target's length for getattr's `st_size`, from the backing target's length or the
    /// blob's size, without any key; nil when it cannot be one of ours.
    public static func plaintextLength(backingTarget: String, root: FileDescriptor) -> Int? {
        let sealedLength: Int
        if let linkID = linkID(of: backingTarget) {
            guard let links = try? openLinksDirectory(in: root, creating: false) else { return nil }
            defer { links.close() }
            guard let status = try? links.status(of: linkID.description), status.isRegularFile else { return nil }
            sealedLength = Int(status.st_size)
        } else {
            guard let length = Base64URL.decodedLength(ofCharacterCount: backingTarget.utf8.count) else { return nil }
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

    private static func isPlausible(sealedLength: Int) -> Bool {
        (1...maximumTargetLength).contains(sealedLength - XChaCha20Poly1305.overhead)
    }

    /// The link id of an out-of-line target `@<32 lowercase hex digits>`, else nil (fsck
    /// collects them to find blobs no symlink refers to).
    static func linkID(of backingTarget: String) -> ObjectID? {
        let characters = Array(backingTarget.utf8)
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
        let maximumSize = maximumTargetLength + XChaCha20Poly1305.overhead
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
