/// The release `protfs version` reports. The on-disk format has its own version numbers
/// (`Keybag.currentVersion`, and `FileHeader.formatVersion` for file headers and directory
/// records), which change only with the format.
public enum ProductVersion {
    public static let release = "0.2.0"
}
