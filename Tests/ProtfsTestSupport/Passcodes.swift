import ProtfsCrypto

/// A passcode in locked memory, as the vault takes it.
public func passcode(_ text: String) -> SecureBuffer {
    Array(text.utf8).withUnsafeBytes { SecureBuffer(copying: $0) }
}
