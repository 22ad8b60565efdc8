import ProtfsControlProtocol
import ProtfsDomain

/// An `OSStatus` other than success, thrown inside the library and returned by `SecItem*`,
/// with why for `errSecParam` (which key, what is wrong with it: never its value, which may be
/// a secret). Statuses compare by their code alone.
struct KeychainStatus: Error, Equatable {
    let status: OSStatus
    let reason: String?

    static func == (left: KeychainStatus, right: KeychainStatus) -> Bool { left.status == right.status }

    /// `errSecParam`, saying why.
    static func param(_ reason: String) -> KeychainStatus { KeychainStatus(status: errSecParam, reason: reason) }

    static let param = KeychainStatus(status: errSecParam)
    static let notAvailable = KeychainStatus(status: errSecNotAvailable)
    static let itemNotFound = KeychainStatus(status: errSecItemNotFound)
    static let duplicate = KeychainStatus(status: errSecDuplicateItem)
    static let unimplemented = KeychainStatus(status: errSecUnimplemented)
    static let authFailed = KeychainStatus(status: errSecAuthFailed)

    /// The status for a refusal of the daemon, by its exit code (docs/CONTROL.md).
    init(_ failure: ControlFailure) {
        reason = failure.exitCode == .usage ? "the keychain daemon refused the request: \(failure.message)" : nil
        switch failure.exitCode {
        case .refusedByLockState: status = errSecInteractionNotAllowed
        case .notFound: status = errSecItemNotFound
        case .alreadyExists: status = errSecDuplicateItem
        case .usage: status = errSecParam
        default: status = errSecNotAvailable
        }
    }

    init(status: OSStatus, reason: String? = nil) {
        self.status = status
        self.reason = reason
    }
}
