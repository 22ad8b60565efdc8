import ProtfsCore
import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// A symlink target as builds before format 3 wrote it (docs/FORMAT.md "Symlinks", format 2):
/// sealed to its location in the backing target itself (out of line only when long), so a
/// rename had to make a new backing symlink. protfs no longer writes these; this writer stays
/// here only, to make the old vaults that must still read and that a rename upgrades.
public enum FormatTwoSymlinkTarget {
    public static func store(target: [UInt8], at location: SymlinkLocation, keys: FilesystemKeys,
                             root: FileDescriptor) throws -> String {
        let sealedLength = target.count + XChaCha20Poly1305.overhead
        if 2 + Base64URL.encodedLength(ofByteCount: sealedLength) <= SymlinkTarget.maximumInlineLength {
            let associatedData = SymlinkTarget.associatedData(linkID: nil, at: location)
            return "2." + Base64URL.encode(XChaCha20Poly1305.seal(target, authenticating: associatedData, with: keys.symlinkTarget))
        }
        let linkID = ObjectID.random()
        let associatedData = SymlinkTarget.associatedData(linkID: linkID, at: location)
        let sealed = XChaCha20Poly1305.seal(target, authenticating: associatedData, with: keys.symlinkTarget)
        do { try root.makeDirectory(ReservedNames.links, mode: 0o700) } catch { guard error == .exists else { throw error } }
        let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
        defer { links.close() }
        try links.writeFileAtomically(linkID.description, contents: sealed)
        return "2.@" + linkID.description
    }
}
