import ProtfsTestSupport
import Foundation
import Glibc
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}

extension LockedKey {
    /// A copy of the key's bytes, for tests that compare or pin keys.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// One keybag made once (Argon2id is the slow part) and shared by the tests that only
/// decode, tamper with or unlock it.
enum KeybagFixture {
    static let deviceKey = LockedKey.random()
    static let deviceKeys = DeviceKeys(deviceKey: deviceKey)
    static let passcodeText = "correct horse battery staple"
    static let keybag = try! Keybag.create(passcode: passcode(passcodeText), kdf: .interactive, deviceKeys: deviceKeys)
    static let bytes = keybag.encoded()
}
