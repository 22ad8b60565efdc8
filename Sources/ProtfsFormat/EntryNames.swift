import ProtfsCrypto
import ProtfsSystem

/// What a plaintext name in a directory becomes on the backing store.
public enum BackingEntryName: Equatable, Sendable {
    /// The encoded name is itself the backing entry.
    case short(String)
    /// The encoded name is too long for the backing filesystem: the entry is
    /// `protfs.long.<base64url(BLAKE2b-256(encoded))>`, and the sidecar `<entry>.name` holds
    /// the encoded name.
    case long(entry: String, sidecar: String, encoded: String)

    /// NAME_MAX of the backing filesystem.
    public static let maximumBackingNameLength = 255
    /// A sidecar larger than this is not one of ours (the longest encoded name is 363 bytes).
    static let maximumSidecarSize = 512

    /// The name to give the backing `*at` call.
    public var entry: String {
        switch self {
        case .short(let encoded): encoded
        case .long(let entry, _, _): entry
        }
    }

    /// The backing entry for `name` in the directory with id `directoryID`.
    public static func make(for name: [UInt8], in directoryID: ObjectID, keys: FilesystemKeys) throws(Errno) -> BackingEntryName {
        try validate(name)
        let encoded = SIVNameCipher.entryNames(keys).encrypt(name, tweak: directoryID)
        return encoded.utf8.count > maximumBackingNameLength ? long(encoded: encoded) : .short(encoded)
    }

    /// Checks a name the kernel sent: 1...255 bytes of anything but `/` and NUL (UTF-8 or
    /// not), and neither `.` nor `..`.
    public static func validate(_ name: [UInt8]) throws(Errno) {
        guard name.count <= SIVNameCipher.maximumNameLength else { throw .nameTooLong }
        let dot = UInt8(ascii: ".")
        guard !name.isEmpty, name != [dot], name != [dot, dot],
              !name.contains(UInt8(ascii: "/")), !name.contains(0) else { throw .invalid }
    }

    static func long(encoded: String) -> BackingEntryName {
        let hash = BLAKE2b.mac(key: nil, outputByteCount: 32, Array(encoded.utf8))
        let entry = ReservedNames.longPrefix + Base64URL.encode(hash)
        return .long(entry: entry, sidecar: entry + ReservedNames.sidecarSuffix, encoded: encoded)
    }
}

// MARK: - Reading a backing directory

extension BackingEntryName {
    /// What a name found in a backing directory is.
    public enum Kind: Equatable, Sendable {
        /// Looks like an encoded name: decrypt it.
        case encoded
        /// `protfs.long.<hash>`: its encoded name is in the sidecar.
        case longEntry
        /// `protfs.long.<hash>.name`, the sidecar of a long entry.
        case sidecar
        /// One of the daemon's own files (keybag, directory metadata, link blobs, temporary
        /// files, or anything else in the `protfs.` namespace).
        case reserved
        /// Not made by protfs (`lost+found`, stray files): never shown on the mount.
        case foreign
    }

    public static func classify(_ backingName: String) -> Kind {
        let bytes = Array(backingName.utf8)
        guard bytes.starts(with: ReservedNames.namespacePrefix.utf8) else {
            // Over 255 bytes it would have been stored long: not ours, even on a backing
            // filesystem that allows such names.
            let plausible = bytes.count <= maximumBackingNameLength && Base64URL.decode(backingName) != nil
            return plausible ? .encoded : .foreign
        }
        guard bytes.starts(with: ReservedNames.longPrefix.utf8) else { return .reserved }
        var hash = bytes[ReservedNames.longPrefix.utf8.count...]
        var kind = Kind.longEntry
        let suffix = Array(ReservedNames.sidecarSuffix.utf8)
        if hash.count > suffix.count, hash.suffix(suffix.count).elementsEqual(suffix) {
            hash = hash.dropLast(suffix.count)
            kind = .sidecar
        }
        return Base64URL.decode(String(decoding: hash, as: UTF8.self))?.count == 32 ? kind : .reserved
    }

    /// The plaintext name behind a backing entry, for readdir; nil when the entry is not a
    /// name (reserved, sidecar, foreign) or cannot be read back (damaged, made for another
    /// directory, sidecar missing or not the one of this entry).
    public static func plaintextName(of backingName: String, in directory: FileDescriptor,
                                     directoryID: ObjectID, keys: FilesystemKeys) -> [UInt8]? {
        let encoded: String
        if !backingName.utf8.starts(with: ReservedNames.namespacePrefix.utf8) {
            // An encoded name or a foreign one, which `classify` would tell apart by decoding
            // it: the decryption decodes it anyway, and refuses what is not base64url. One
            // decoding per entry of a listing instead of two.
            guard backingName.utf8.count <= maximumBackingNameLength else { return nil }
            encoded = backingName
        } else {
            guard classify(backingName) == .longEntry,
                  let stored = sidecarContents(of: backingName, in: directory) else { return nil }
            encoded = stored
        }
        guard let name = SIVNameCipher.entryNames(keys).decrypt(encoded, tweak: directoryID),
              (try? validate(name)) != nil else { return nil }
        return name
    }

    /// The encoded name in the sidecar of the long entry `entry`, if the sidecar is a small
    /// regular file whose contents hash to the entry's name and are too long to have been
    /// stored directly (so each plaintext name has exactly one backing form).
    private static func sidecarContents(of entry: String, in directory: FileDescriptor) -> String? {
        guard let file = try? OwnedDescriptor.openRegularFile(entry + ReservedNames.sidecarSuffix, in: directory) else {
            return nil
        }
        guard let status = try? file.borrowed.status(), status.st_size <= maximumSidecarSize,
              let contents = try? file.borrowed.readAll(limit: maximumSidecarSize) else { return nil }
        let encoded = String(decoding: contents, as: UTF8.self)
        guard encoded.utf8.count > maximumBackingNameLength, long(encoded: encoded).entry == entry else { return nil }
        return encoded
    }
}

// MARK: - Changing a backing directory crash-safely

extension BackingEntryName {
    /// Makes the backing entry with `operation(entry)` (create, mkdir, symlink, mknod, link).
    /// A long name's sidecar is in place first, so a crash never leaves an entry without its
    /// name; if the operation fails and no entry of that name exists, the sidecar goes again.
    public func create<Result>(in directory: FileDescriptor,
                               _ operation: (String) throws(Errno) -> Result) throws(Errno) -> Result {
        guard case .long(let longEntry, let sidecar, let encoded) = self else { return try operation(entry) }
        try directory.writeFileAtomically(sidecar, contents: Array(encoded.utf8))
        do throws(Errno) {
            return try operation(longEntry)
        } catch {
            Self.removeSidecar(sidecar, ifNoEntry: longEntry, in: directory)
            throw error
        }
    }

    /// Removes the backing entry with `operation(entry)` (unlink, rmdir), then a long name's
    /// sidecar. A crash in between leaves only an orphan sidecar, which hides nothing.
    public func remove(in directory: FileDescriptor, _ operation: (String) throws(Errno) -> Void) throws(Errno) {
        try operation(entry)
        if case .long(_, let sidecar, _) = self { try? directory.removeFile(sidecar) }
    }

    /// Renames a backing entry: the destination's sidecar is written before the rename, the
    /// source's removed after it (unless the source name still exists, as when both names were
    /// links to the same object). An exchange keeps both names, so both sidecars stay.
    public static func rename(_ source: BackingEntryName, in sourceDirectory: FileDescriptor,
                              to destination: BackingEntryName, in destinationDirectory: FileDescriptor,
                              flags: FileDescriptor.RenameFlags = []) throws(Errno) {
        guard !flags.contains(.exchange) else {
            try sourceDirectory.rename(source.entry, to: destinationDirectory, destination.entry, flags: flags)
            return
        }
        try destination.create(in: destinationDirectory) { (entry: String) throws(Errno) in
            try sourceDirectory.rename(source.entry, to: destinationDirectory, entry, flags: flags)
        }
        if case .long(let entry, let sidecar, _) = source {
            removeSidecar(sidecar, ifNoEntry: entry, in: sourceDirectory)
        }
    }

    private static func removeSidecar(_ sidecar: String, ifNoEntry entry: String, in directory: FileDescriptor) {
        do throws(Errno) {
            _ = try directory.status(of: entry)
        } catch {
            if error == .noEntry { try? directory.removeFile(sidecar) }
        }
    }
}
