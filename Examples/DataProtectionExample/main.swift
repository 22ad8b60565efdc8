// The iOS Data Protection snippets an app developer knows, running on a protfs mount.
// On iOS this file would begin `import Foundation; import Security; import UIKit`; here the
// one import below replaces them. The other changes are marked "iOS:".
//
// Usage: PROTFS_KEYCHAIN=MOUNTPOINT DataProtectionExample DIRECTORY-ON-THE-MOUNT
// It sets up, prints "ready", and waits for the vault to lock (`protfsctl lock MOUNTPOINT`);
// then it prints what it can and cannot read.
import DataProtection
import Foundation

guard CommandLine.arguments.count == 2, let mountpoint = ProcessInfo.processInfo.environment["PROTFS_KEYCHAIN"] else {
    FileHandle.standardError.write(Data("usage: PROTFS_KEYCHAIN=MOUNTPOINT DataProtectionExample DIRECTORY\n".utf8))
    exit(2)
}
let base = CommandLine.arguments[1]
setvbuf(stdout, nil, _IOLBF, 0)

// A directory whose new files are `complete`. iOS: FileManager.default
let documents = base + "/Documents"
try ProtectedFileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true,
                                                 attributes: [.protectionKey: FileProtectionType.complete])

// A file written with complete protection. iOS: data.write(to:options:)
let notes = URL(fileURLWithPath: documents + "/notes.txt")
try Data("meeting at noon\n".utf8).writeProtected(to: notes, options: [.atomic, .completeFileProtection])
let cache = URL(fileURLWithPath: base + "/cache.txt")
try Data("public cache\n".utf8).writeProtected(to: cache, options: [.atomic, .noFileProtection])
print("notes.txt: \(try notes.fileProtection?.rawValue ?? "no class")")  // iOS: resourceValues(forKeys: [.fileProtectionKey])

// A token in the keychain, readable only while unlocked. As on iOS, unchanged.
let tokenQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                 kSecAttrService as String: "api.example.com",
                                 kSecAttrAccount as String: "alice"]
SecItemDelete(tokenQuery as CFDictionary)
var addQuery = tokenQuery
addQuery[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
addQuery[kSecValueData as String] = "s3cr3t-token".data(using: .utf8)!
print("SecItemAdd: \(SecItemAdd(addQuery as CFDictionary, nil))")

func readToken() -> String {
    var query = tokenQuery
    query[kSecReturnData as String] = kCFBooleanTrue
    query[kSecMatchLimit as String] = kSecMatchLimitOne
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    guard status == errSecSuccess, let data = result as? Data else { return "SecItemCopyMatching: \(status)" }
    return "SecItemCopyMatching: \(status), token \(String(decoding: data, as: UTF8.self))"
}
print(readToken())

// Close `complete` files when the lock starts. iOS: UIApplication.protectedDataWillBecomeUnavailableNotification,
// posted by UIKit; here a monitor of the mount posts it.
var openNotes: FileHandle? = try FileHandle(forReadingFrom: notes)
let monitor = ProtectedDataMonitor(mountpoint: mountpoint)
let locked = DispatchSemaphore(value: 0)
let willObserver = NotificationCenter.default.addObserver(forName: .protectedDataWillBecomeUnavailable, object: nil, queue: nil) { _ in
    try? openNotes?.close()
    openNotes = nil
    print("protectedDataWillBecomeUnavailable: closed notes.txt")
}
let didObserver = NotificationCenter.default.addObserver(forName: .protectedDataDidBecomeUnavailable, object: nil, queue: nil) { _ in
    locked.signal()
}
print("ready: lock the vault now (protfsctl lock \(mountpoint))")
guard locked.wait(timeout: .now() + 120) == .success else {
    print("the vault did not lock within 120 s")
    exit(1)
}

// What a locked device allows.
func describe(_ url: URL) -> String {
    do {
        return "read \(url.lastPathComponent): \(String(decoding: try Data(contentsOf: url), as: UTF8.self).trimmingCharacters(in: .newlines))"
    } catch let error as CocoaError {
        return "read \(url.lastPathComponent): refused, CocoaError \(error.code.rawValue)"
    } catch {
        return "read \(url.lastPathComponent): \(error)"
    }
}
print(describe(notes))
print(describe(cache))
do {
    try Data("more".utf8).writeProtected(to: notes, options: [.atomic, .completeFileProtection])
    print("write notes.txt: written")
} catch let error as CocoaError {
    print("write notes.txt: refused, CocoaError \(error.code.rawValue)")
}
print(readToken())
print("isProtectedDataAvailable: \(monitor.isProtectedDataAvailable)")
NotificationCenter.default.removeObserver(willObserver)
NotificationCenter.default.removeObserver(didObserver)
monitor.stop()
