/// The longest passcode any entry point takes, in bytes: the terminal, a file, standard
/// input and the control socket alike.
public enum PasscodeLimits {
    public static let maximumByteCount = 4096
}
