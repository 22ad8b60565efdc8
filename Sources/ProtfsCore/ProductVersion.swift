/// The release `protfs version` reports. The on-disk format has its own version numbers
/// (`Keybag.currentVersion` and the file header's), which change only with the format.
public enum ProductVersion {
    public static let release = "0.1.0"
}
