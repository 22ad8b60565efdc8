import Foundation
import Glibc
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// A fresh directory under /tmp, removed with everything in it when released.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/protfs-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    func child(_ name: String) -> String { "\(path)/\(name)" }

    func write(_ bytes: [UInt8], to name: String, mode: mode_t = 0o600) throws {
        let fd = try FileDescriptor.open(path: child(name), [.writeOnly, .create, .truncate], mode: mode)
        defer { fd.close() }
        try fd.writeAll(bytes)
        try fd.changeMode(mode)
    }

    func read(_ name: String) throws -> [UInt8] {
        let fd = try FileDescriptor.open(path: child(name), [.readOnly])
        defer { fd.close() }
        return try fd.readAll()
    }

    func openDirectory(_ name: String = ".") throws -> FileDescriptor {
        try FileDescriptor.open(path: child(name), [.readOnly, .directory])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func passcode(_ text: String) -> SecureBuffer {
    Array(text.utf8).withUnsafeBytes { SecureBuffer(copying: $0) }
}

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
