import ProtfsCrypto

/// Apple's random number generator argument: there is one, the kernel's.
public final class SecRandom: Sendable {
    private init() {}
}

/// What `SecRandomCopyBytes` takes first.
public typealias SecRandomRef = SecRandom

/// The default generator (`nil`): the kernel's.
public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` random bytes from the system's generator (libsodium's, the
/// kernel's `getrandom`), as the Security framework does on iOS; `errSecSuccess`, or
/// `errSecParam` for a negative count or a null buffer with a count.
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer?) -> Int32 {
    guard count >= 0 else { return errSecParam }
    guard count > 0 else { return errSecSuccess }
    guard let bytes else { return errSecParam }
    SecureRandom.fill(UnsafeMutableRawBufferPointer(start: bytes, count: count))
    return errSecSuccess
}
