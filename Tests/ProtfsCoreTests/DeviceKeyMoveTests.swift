import Glibc
import ProtfsCrypto
import ProtfsTestSupport
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat

/// The vault's side of the TPM without one: a sealer that only pretends (its "sealed" bytes
/// hold the secret), to check what the core does with it: the passcode secret's files and
/// generations, a moved device key, an interrupted move finished at the next open.
@Suite struct DeviceKeyMoveTests {
    let dir = TemporaryDirectory()
    var backing: String { dir.child("backing") }
    var keyPath: String { dir.child("keys/device.key") }

    /// Seals nothing: a marker, then the bytes. A wrong auth value is nil, as a TPM's
    /// authorization failure is.
    struct PretendSealer: DeviceKeySealer {
        static let marker = Array("PRETEND!".utf8)

        func seal(_ key: LockedKey, path: String) throws(VaultError) -> [UInt8] { Self.marker + key.withUnsafeBytes { Array($0) } }

        func unseal(_ contents: [UInt8], path: String) throws(VaultError) -> LockedKey {
            guard contents.starts(with: Self.marker) else { throw .deviceKeyWrongSize(path: path, size: contents.count) }
            guard let key = try? Array(contents.dropFirst(Self.marker.count)).withUnsafeBytes({ try LockedKey.copying($0) }) else {
                throw .deviceKeyWrongSize(path: path, size: contents.count)
            }
            return key
        }

        func sealPasscodeSecret(_ secret: LockedKey, auth: LockedKey) throws(VaultError) -> [UInt8] {
            auth.withUnsafeBytes { Array($0) } + secret.withUnsafeBytes { Array($0) }
        }

        func unsealPasscodeSecret(_ sealed: [UInt8], auth: LockedKey) throws(VaultError) -> LockedKey? {
            guard Array(sealed.prefix(32)) == auth.withUnsafeBytes({ Array($0) }) else { return nil }
            return try? Array(sealed.suffix(32)).withUnsafeBytes { try LockedKey.copying($0) }
        }

        func lockoutRetryAfterSeconds() -> Int? { nil }
    }

    func names() throws -> Set<String> { Set(try dir.openDirectory("backing").entryNames()) }

    func open(_ path: String? = nil, sealer: (any DeviceKeySealer)? = PretendSealer()) throws -> Vault {
        try Vault.open(backing: backing, deviceKeyPath: path ?? keyPath, sealer: sealer)
    }

    @Test func sealedVaultCountsPasscodesAndPasswdReseals() throws {
        _ = try Vault.initialize(backing: backing, protectionClass: .complete, deviceKeyPath: keyPath, sealer: PretendSealer(),
                                 sealing: true, passcode: { passcode("1234") }, kdf: .interactive)
        #expect(try names().contains("protfs.passcode-seal.1"))
        do {
            let vault = try open()
            #expect(vault.passcodeCountedByHardware)
            #expect(throws: VaultError.wrongPasscode(failedAttempts: 1)) { try vault.unlock(passcode: passcode("0000")) }
            try vault.unlock(passcode: passcode("1234"))
            try vault.changePasscode(old: passcode("1234"), new: passcode("5678"))
        }
        #expect(try names().contains("protfs.passcode-seal.2") && !names().contains("protfs.passcode-seal.1"))
        let vault = try open()
        try vault.unlock(passcode: passcode("5678"))
        // Without the sealer the keybag still asks for the TPM's secret: said, not "wrong passcode".
        try? dir.openDirectory("backing").removeFile("protfs.passcode-seal.2")
        #expect(throws: VaultError.self) { try vault.unlock(passcode: passcode("5678")) }
    }

    @Test func movedKeyOpensAndTheOldOneDoesNot() throws {
        _ = try Vault.initialize(backing: backing, protectionClass: .complete, deviceKeyPath: keyPath,
                                 passcode: { passcode("1234") }, kdf: .interactive)
        let oldKey = dir.child("old.key")
        try dir.write(try dir.read("keys/device.key"), to: "old.key")
        for sealer in [PretendSealer(), nil] as [PretendSealer?] {
            try open().moveDeviceKey(passcode: passcode("1234"), to: sealer)
            #expect(try dir.read("keys/device.key").starts(with: PretendSealer.marker) == (sealer != nil))
            let vault = try open()
            #expect(vault.passcodeCountedByHardware == (sealer != nil))
            try vault.unlock(passcode: passcode("1234"))
            #expect(vault.rootMetadata.protectionClass == .complete)
            #expect(try names().filter { $0.hasPrefix("protfs.device-origin.") }.count == 1)
        }
        #expect(throws: VaultError.deviceKeyMismatch) { try open(oldKey) }
    }

    @Test func interruptedMoveIsFinishedAtTheNextOpen() throws {
        _ = try Vault.initialize(backing: backing, protectionClass: .complete, deviceKeyPath: keyPath,
                                 passcode: { passcode("1234") }, kdf: .interactive)
        let oldKey = try dir.read("keys/device.key")
        try open().moveDeviceKey(passcode: passcode("1234"), to: nil)
        // The crash between the keybag and the key put in place: the new key still staged.
        let newKey = try dir.read("keys/device.key")
        try dir.write(newKey, to: "keys/device.key.new")
        try dir.write(oldKey, to: "keys/device.key")
        try open().unlock(passcode: passcode("1234"))
        #expect(try dir.read("keys/device.key") == newKey)
        #expect(throws: (any Error).self) { try dir.read("keys/device.key.new") }
    }
}
