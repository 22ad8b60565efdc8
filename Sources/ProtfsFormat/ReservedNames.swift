/// Names the daemon owns in the backing directory (besides these: `protfs.keybag` in the
/// root and `protfs.dir` in every directory). Each contains a `.`, which base64url never
/// does, so none can be mistaken for an encoded entry name; all start with `protfs.`, and
/// readdir hides the whole namespace.
public enum ReservedNames {
    public static let namespacePrefix = "protfs."
    /// Out-of-line symlink targets, in the backing root only.
    public static let links = "protfs.links"
    /// Files being written before an atomic rename into place.
    public static let temporaryPrefix = "protfs.tmp."
    /// Entries whose encoded name is too long for the backing filesystem.
    public static let longPrefix = "protfs.long."
    /// Suffix of the sidecar holding a long entry's encoded name.
    public static let sidecarSuffix = ".name"
    /// Where `fsck --repair` puts objects the mount cannot read, in the backing root only.
    public static let lostAndFound = "protfs.lost+found"
    /// The TPM-sealed passcode secret of the keybag of the generation that follows, in the
    /// backing root only (docs/FORMAT.md).
    public static let passcodeSealPrefix = "protfs.passcode-seal."
    /// The recovery key's public key and the device key sealed to it, in the backing root
    /// only (docs/FORMAT.md).
    public static let recovery = "protfs.recovery"
    /// Keychain item records, in the backing root only.
    public static let items = "protfs.items"

    /// Whether a backing name in a vault directory names an entry of the vault (an encoded
    /// name, or a long one without its sidecar suffix): a file with a header, or a directory
    /// with its `protfs.dir`, as its type says.
    package static func isVaultEntry(_ name: String) -> Bool {
        guard name.hasPrefix(namespacePrefix) else { return true }
        return name.hasPrefix(longPrefix) && !name.hasSuffix(sidecarSuffix)
    }
}
