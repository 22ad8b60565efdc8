// SecItemAdd and SecItemCopyMatching calls per second in one process, as an app makes them
// (bench/secret-service runs it on its vault).
// Usage: PROTFS_KEYCHAIN=MOUNTPOINT KeychainRate COUNT
// Prints "secitem add A copy C" (calls per second); the items it adds are deleted at the end.
import DataProtection
import Foundation

guard CommandLine.arguments.count == 2, let count = Int(CommandLine.arguments[1]), count > 0 else {
    FileHandle.standardError.write(Data("usage: PROTFS_KEYCHAIN=MOUNTPOINT KeychainRate COUNT\n".utf8))
    exit(2)
}
let service = "keychain-rate-\(getpid())"
let secret = Data("bench-secret".utf8)

func rate(_ body: (Int) -> OSStatus) -> Double {
    let start = ContinuousClock.now
    for index in 0..<count {
        let status = body(index)
        guard status == errSecSuccess else {
            FileHandle.standardError.write(Data("KeychainRate: call \(index) returned \(status)\n".utf8))
            exit(1)
        }
    }
    let elapsed = ContinuousClock.now - start
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let add = rate { index in
    SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: "account-\(index)", kSecValueData as String: secret] as CFDictionary, nil)
}
let copy = rate { index in
    var result: CFTypeRef?
    return SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: "account-\(index)", kSecReturnData as String: true] as CFDictionary,
                               &result)
}
SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service] as CFDictionary)
print(String(format: "secitem add %.1f copy %.1f", add, copy))
