import ProtfsCore
import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// A symlink target as builds before format 2 wrote it (docs/FORMAT.md "Symlinks", format 1):
/// sealed to no location. protfs no longer writes these; this writer stays here only, to
/// make the old vaults that must still read and that `fsck --repair` upgrades.
public enum FormatOneSymlinkTarget {
    public static func store(target: [UInt8], keys: FilesystemKeys, root: FileDescriptor) throws -> String {
        let associatedData = Array("protfs symlink v1".utf8)
        let sealedLength = target.count + XChaCha20Poly1305.overhead
        if Base64URL.encodedLength(ofByteCount: sealedLength) <= SymlinkTarget.maximumInlineLength {
            return Base64URL.encode(XChaCha20Poly1305.seal(target, authenticating: associatedData, with: keys.symlinkTarget))
        }
        let linkID = ObjectID.random()
        let sealed = XChaCha20Poly1305.seal(target, authenticating: associatedData + linkID.bytes, with: keys.symlinkTarget)
        do { try root.makeDirectory(ReservedNames.links, mode: 0o700) } catch { guard error == .exists else { throw error } }
        let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
        defer { links.close() }
        let blob = try FileDescriptor.open(linkID.description, in: links, [.writeOnly, .create, .exclusive], mode: 0o600)
        defer { blob.close() }
        try blob.writeAll(sealed)
        try blob.sync()
        return "@" + linkID.description
    }
}
