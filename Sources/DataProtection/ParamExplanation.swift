import Foundation

/// Why the calling thread's last `errSecParam` was returned: which key, what is wrong with it
/// (never its value). `SecCopyErrorMessageString(errSecParam, nil)` appends it to Apple's
/// message, and the library says it once on standard error (`DataProtectionDiagnostics`).
/// Per thread, as `errno` is: another thread's failure never explains this one's.
enum ParamExplanation {
    private static let key = "DataProtection.errSecParam"

    static func record(_ reason: String) {
        Thread.current.threadDictionary[key] = reason
        DataProtectionDiagnostics.report("errSecParam: \(reason)")
    }

    static var last: String? { Thread.current.threadDictionary[key] as? String }
}
