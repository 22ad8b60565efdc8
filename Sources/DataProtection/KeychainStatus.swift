import ProtfsControlProtocol
import ProtfsDomain

/// An `OSStatus` other than success, thrown inside the library and returned by `SecItem*`.
struct KeychainStatus: Error, Equatable {
    let status: OSStatus

    static let param = KeychainStatus(status: errSecParam)
    static let notAvailable = KeychainStatus(status: errSecNotAvailable)
    static let itemNotFound = KeychainStatus(status: errSecItemNotFound)
    static let duplicate = KeychainStatus(status: errSecDuplicateItem)
    static let unimplemented = KeychainStatus(status: errSecUnimplemented)
    static let authFailed = KeychainStatus(status: errSecAuthFailed)

    /// The status for a refusal of the daemon, by its exit code (docs/CONTROL.md).
    init(_ failure: ControlFailure) {
        switch failure.exitCode {
        case .refusedByLockState: status = errSecInteractionNotAllowed
        case .notFound: status = errSecItemNotFound
        case .alreadyExists: status = errSecDuplicateItem
        case .usage: status = errSecParam
        default: status = errSecNotAvailable
        }
    }

    init(status: OSStatus) { self.status = status }
}
