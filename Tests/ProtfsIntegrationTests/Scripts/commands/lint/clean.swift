import DataProtection
import Foundation

// data.write(to: url, options: .completeFileProtection) would protect nothing on Linux.
func save(_ data: Data, to url: URL) throws {
    try data.writeProtected(to: url, options: [.atomic, .completeFileProtection])
    try data.write(to: url, options: .atomic)
    let note = "try data.write(to: url, options: .completeFileProtection)"
    let raw = #"(url as NSURL).setResourceValue(x, forKey: .fileProtectionKey)"#
    /* nested /* comment */ data.write(to: url, options: .noFileProtection) */
    try url.setFileProtection(.complete)
    try (url as NSURL).setResourceValue(URLFileProtection.complete, forKey: .fileProtectionKey)
    var other = url
    var values = URLResourceValues()
    values.isExcludedFromBackup = true
    try other.setResourceValues(values)
    print(note, raw)
}
