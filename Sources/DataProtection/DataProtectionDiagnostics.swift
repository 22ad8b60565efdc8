import Foundation
import Synchronization

/// Why the library answered as it did where the API has no room for it (an `OSStatus`, a
/// `Bool`): one line on standard error, once per distinct reason per process, as the Security
/// framework logs on iOS. Never a secret: reasons name mount points and variables only.
public enum DataProtectionDiagnostics {
    private static let reported = Mutex<Set<String>>([])
    private static let limit = 64

    /// The last reason reported, for programs that show it themselves.
    public static var lastReason: String? { last.withLock { $0 } }
    private static let last = Mutex<String?>(nil)

    static func report(_ reason: String) {
        last.withLock { $0 = reason }
        let isNew = reported.withLock { reported in
            guard reported.count < limit else { return false }
            return reported.insert(reason).inserted
        }
        if isNew { FileHandle.standardError.write(Data("DataProtection: \(reason)\n".utf8)) }
    }
}
