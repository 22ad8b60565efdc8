// iOS code as iOS developers write it, with only `import DataProtection` in place of
// `import Security` and `import UIKit`: the seeds' four snippets (file classes, createFile
// with attributes, setResourceValue, keychain queries without a service) and every other
// idiom the library accepts, unchanged. Building this target is the test that they compile;
// `DataProtectionIdiomsTests` runs it across a lock.
//
// Usage: PROTFS_KEYCHAIN=MOUNTPOINT DataProtectionIdioms DIRECTORY-ON-THE-MOUNT
//        PROTFS_KEYCHAIN=MOUNTPOINT DataProtectionIdioms --identity | --raw-observer
//        DataProtectionIdioms --own-manager DIRECTORY-ON-THE-MOUNT
import DataProtection
import Foundation

setvbuf(stdout, nil, _IOLBF, 0)
switch CommandLine.arguments.dropFirst().first {
case "--identity":
    BundleIdentity.run()
    exit(0)
case "--raw-observer": exit(RawNameObserver.run())
case "--own-manager" where CommandLine.arguments.count == 3: exit(OwnFileManager.run(in: CommandLine.arguments[2]))
default: break
}
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: PROTFS_KEYCHAIN=MOUNTPOINT DataProtectionIdioms DIRECTORY\n".utf8))
    exit(2)
}
let base = CommandLine.arguments[1]
try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: nil)

// Seed: file classes.
let classed = base + "/classed.txt"
FileManager.default.createFile(atPath: classed, contents: "classed".data(using: .utf8), attributes: nil)
try FileManager.default.setAttributes([FileAttributeKey.protectionKey: FileProtectionType.complete], ofItemAtPath: classed)
let attributes = try FileManager.default.attributesOfItem(atPath: classed)
if let protection = attributes[.protectionKey] as? FileProtectionType, protection == .complete {
    print("classed.txt: complete")
}

// Seed: createFile with attributes.
let created = base + "/created.txt"
let didCreate = FileManager.default.createFile(atPath: created, contents: "created".data(using: .utf8),
                                               attributes: [FileAttributeKey.protectionKey: FileProtectionType.complete])
print("createFile: \(didCreate)")

// Seed: setResourceValue.
let resource = URL(fileURLWithPath: base + "/resource.txt")
try "resource".data(using: .utf8)!.write(to: resource)
try (resource as NSURL).setResourceValue(URLFileProtection.complete, forKey: .fileProtectionKey)
print("resource.txt: \(try resource.fileProtection == .complete ? "complete" : "not complete")")

// Seed: keychain queries, as written without a service.
let account = "user@example.com"
let addQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                               kSecAttrAccount as String: account,
                               kSecValueData as String: "hunter2".data(using: .utf8)!,
                               kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]
SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account] as CFDictionary)
print("SecItemAdd: \(SecItemAdd(addQuery as CFDictionary, nil))")

func readPassword() -> String {
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                kSecAttrAccount as String: account,
                                kSecReturnData as String: kCFBooleanTrue!,
                                kSecMatchLimit as String: kSecMatchLimitOne]
    var item: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &item)
    guard status == errSecSuccess, let data = item as? Data, let password = String(data: data, encoding: .utf8) else {
        return "SecItemCopyMatching: \(status) (\(SecCopyErrorMessageString(status, nil) ?? "unknown"))"
    }
    return "SecItemCopyMatching: \(status), \(password)"
}
print(readPassword())

// UIKit's availability and notifications, with no monitor created by the program.
let willLock = DispatchSemaphore(value: 0)
let observer = NotificationCenter.default.addObserver(forName: UIApplication.protectedDataWillBecomeUnavailableNotification,
                                                      object: nil, queue: nil) { _ in
    print("protectedDataWillBecomeUnavailable")
    willLock.signal()
}
print("isProtectedDataAvailable: \(UIApplication.shared.isProtectedDataAvailable)")
print("idioms: \(Idioms.check())")

print("ready")
guard willLock.wait(timeout: .now() + 120) == .success else {
    print("no lock within 120 s")
    exit(1)
}
// The grace period: wait until protected data is gone, as the notification announces.
var waited = 0
while UIApplication.shared.isProtectedDataAvailable && waited < 600 {
    usleep(100_000)
    waited += 1
}
print("isProtectedDataAvailable: \(UIApplication.shared.isProtectedDataAvailable)")
for path in [classed, created, resource.path] {
    do {
        _ = try Data(contentsOf: URL(fileURLWithPath: path))
        print("read \((path as NSString).lastPathComponent): allowed")
    } catch let error as CocoaError {
        print("read \((path as NSString).lastPathComponent): CocoaError \(error.code.rawValue)")
    }
}
print(readPassword())
NotificationCenter.default.removeObserver(observer)
