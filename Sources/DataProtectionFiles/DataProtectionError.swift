import Foundation
import ProtfsDomain

/// What the library reports beyond Foundation's own file errors.
public enum DataProtectionError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// A class was asked for on a path outside every protfs mount, where nothing would
    /// enforce it (Foundation on Linux accepts it and does nothing). Set
    /// `ProtectedFileManager.outsideProtfs` to `.ignore` to make that a no-op instead.
    case notOnProtfs(path: String)
    /// A protection value that is none of Foundation's four.
    case unknownProtection(String)
    /// No protfs daemon answered for a mount point; the message says where it looked.
    case noDaemon(String)

    /// What went wrong and what to do, in a sentence.
    public var description: String {
        switch self {
        case .notOnProtfs(let path):
            "\(path) is not on a protfs mount, so no protection class can be enforced there; "
                + "put it on a protfs mount, or set ProtectedFileManager.outsideProtfs = .ignore for portable code"
        case .unknownProtection(let value):
            "\(value) is not a file protection class: give FileProtectionType.complete, .completeUnlessOpen, "
                + ".completeUntilFirstUserAuthentication or .none, or the name of one "
                + "(\(ProtectionClass.allCases.map(\.appleName).joined(separator: ", ")))"
        case .noDaemon(let message): message
        }
    }

    /// `description`, for `localizedDescription`.
    public var errorDescription: String? { description }
}
