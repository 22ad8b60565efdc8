/// Names the daemon owns in the backing directory. Each contains a `.`, which base64url
/// never does, so none can be mistaken for an encoded entry name; all start with `protfs.`.
public enum ReservedNames {
    public static let namespacePrefix = "protfs."
    /// The keybag, in the backing root only.
    public static let keybag = "protfs.keybag"
    /// Directory metadata, in every backing directory.
    public static let directoryMetadata = "protfs.dir"
    /// Out-of-line symlink targets, in the backing root only.
    public static let links = "protfs.links"
    /// Files being written before an atomic rename into place.
    public static let temporaryPrefix = "protfs.tmp."
    /// Entries whose encoded name is too long for the backing filesystem.
    public static let longPrefix = "protfs.long."
    /// Suffix of the sidecar holding a long entry's encoded name.
    public static let sidecarSuffix = ".name"
}
