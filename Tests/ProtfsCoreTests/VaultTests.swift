import ProtfsDomain
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem
import Glibc

@Suite struct VaultTests {
    let dir = TemporaryDirectory()
    var backing: String { dir.child("backing") }
    var deviceKeyPath: String { dir.child("keys/device.key") }

    @discardableResult
    func initialize(_ protectionClass: ProtectionClass = .complete, passcodeText: String = "1234") throws -> Vault.Initialization {
        try Vault.initialize(backing: backing, protectionClass: protectionClass, deviceKeyPath: deviceKeyPath,
                             passcode: { passcode(passcodeText) }, kdf: .interactive)
    }

    @Test func initializeOpenAndUnlock() throws {
        let result = try initialize(.complete)
        #expect(result.deviceKeyCreated)
        #expect(result.deviceKeyPath == deviceKeyPath)
        let root = try dir.openDirectory()
        defer { root.close() }
        #expect(try root.status(of: "backing").st_mode & 0o7777 == 0o700)
        #expect(Set(try dir.openDirectory("backing").entryNames()) == ["protfs.keybag", "protfs.dir"])

        let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
        #expect(vault.vaultID == result.vaultID)
        #expect(vault.warnings.isEmpty)
        #expect(vault.rootMetadata.protectionClass == .complete)
        #expect(try ClassHint.read(from: vault.backingRoot, objectID: vault.rootMetadata.directoryID,
                                   keys: vault.filesystemKeys) == .complete)
        #expect(vault.keyring.installedClasses == [.none])
        #expect(vault.passcodeSet && vault.generation == 1 && vault.failedAttempts == 0)
        try vault.unlock(passcode: passcode("1234"))
        #expect(vault.keyring.installedClasses == Set(ProtectionClass.allCases))

        // One process per backing directory: a second open waits, then gives up.
        let error = #expect(throws: VaultError.self) {
            try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath, lockTimeout: .milliseconds(200))
        }
        #expect(error == .backingBusy(path: backing, waitedSeconds: 1))
        #expect(error?.exitCode == .failure)
    }

    @Test func wrongPasscodesAreCountedAndDelayed() throws {
        try initialize()
        do {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
            #expect(throws: VaultError.wrongPasscode(failedAttempts: 1)) { try vault.unlock(passcode: passcode("0000")) }
            try vault.unlock(passcode: passcode("1234"))
            #expect(vault.failedAttempts == 0)
            for attempt in 1...5 {
                #expect(throws: VaultError.wrongPasscode(failedAttempts: attempt)) { try vault.unlock(passcode: passcode("0000")) }
            }
            let refused = #expect(throws: VaultError.self) { try vault.unlock(passcode: passcode("1234")) }
            guard case .rateLimited(let seconds) = refused else { Issue.record("not rate limited: \(String(describing: refused))"); return }
            #expect(seconds > 0 && seconds <= 60)
            #expect(refused?.exitCode == .rateLimited)
            #expect("\(refused!)".contains("retry in \(seconds) s"))
            #expect(vault.failedAttempts == 5)
        }
        // The delay survives a restart.
        let reopened = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
        #expect(reopened.failedAttempts == 5 && reopened.retryAfterSeconds != nil)
        #expect(throws: VaultError.self) { try reopened.unlock(passcode: passcode("1234")) }
    }

    @Test func changePasscodeThenRollbackIsRefused() throws {
        try initialize()
        let oldKeybag = try dir.read("backing/protfs.keybag")
        do {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
            #expect(throws: VaultError.wrongPasscode(failedAttempts: 1)) {
                try vault.changePasscode(old: passcode("9999"), new: passcode("5678"))
            }
            try vault.changePasscode(old: passcode("1234"), new: passcode("5678"))
            #expect(vault.generation == 2)
            #expect(vault.keyring.installedClasses == [.none])  // passwd does not unlock
        }
        do {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
            #expect(throws: VaultError.wrongPasscode(failedAttempts: 1)) { try vault.unlock(passcode: passcode("1234")) }
            try vault.unlock(passcode: passcode("5678"))
        }
        #expect(!(try dir.openDirectory("backing").entryNames().contains("protfs.tmp.keybag")))
        // An older keybag copied back is refused.
        try dir.write(oldKeybag, to: "backing/protfs.keybag")
        #expect(throws: VaultError.keybagRollback(found: 1, recorded: 2)) {
            try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
        }
    }

    @Test func initRefusals() throws {
        var asked = false
        #expect(Glibc.mkdir(backing, 0o755) == 0)
        try dir.write([], to: "backing/stray")
        let notEmpty = #expect(throws: VaultError.self) {
            try Vault.initialize(backing: backing, protectionClass: .none, deviceKeyPath: deviceKeyPath,
                                 passcode: { asked = true; return passcode("x") }, kdf: .interactive)
        }
        #expect(notEmpty == .backingNotEmpty(path: backing) && notEmpty?.exitCode == .failure)
        try dir.openDirectory("backing").removeFile("stray")
        try initialize(.none)
        let again = #expect(throws: VaultError.self) {
            try Vault.initialize(backing: backing, protectionClass: .none, deviceKeyPath: deviceKeyPath,
                                 passcode: { asked = true; return passcode("x") }, kdf: .interactive)
        }
        #expect(again == .alreadyInitialized(path: backing) && again?.exitCode == .alreadyExists)
        #expect(!asked)
        // A second vault with the same device key does not create it again.
        let other = try Vault.initialize(backing: dir.child("other"), protectionClass: .none, deviceKeyPath: deviceKeyPath,
                                         passcode: { passcode("y") }, kdf: .interactive)
        #expect(!other.deviceKeyCreated)
    }

    @Test func openRefusalsAndRepairs() throws {
        let missing = #expect(throws: VaultError.self) { try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath) }
        #expect(missing == .backingMissing(path: backing) && missing?.exitCode == .notFound)
        #expect(Glibc.mkdir(backing, 0o700) == 0)
        #expect(Glibc.chmod(backing, 0o755) == 0)
        let empty = #expect(throws: VaultError.self) { try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath) }
        #expect(empty == .notAVault(path: backing) && empty?.exitCode == .notFound)
        // A directory that is not a vault is left as it was.
        #expect(try dir.openDirectory().status(of: "backing").st_mode & 0o7777 == 0o755)
        #expect(Glibc.rmdir(backing) == 0)

        try initialize(.completeUntilFirstUserAuthentication)
        #expect(Glibc.chmod(backing, 0o755) == 0)
        let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath)
        #expect(vault.warnings.count == 1)
        #expect(try vault.backingRoot.status().st_mode & 0o7777 == 0o700)
        #expect(vault.rootMetadata.protectionClass == .completeUntilFirstUserAuthentication)
    }

    @Test func wrongDeviceKeyAndDamagedRoot() throws {
        try initialize()
        let otherKey = dir.child("other/device.key")
        _ = try DeviceKeyFile(path: otherKey).create()
        #expect(throws: VaultError.deviceKeyMismatch) { try Vault.open(backing: backing, deviceKeyPath: otherKey) }
        var metadata = try dir.read("backing/protfs.dir")
        metadata[20] ^= 1
        try dir.write(metadata, to: "backing/protfs.dir")
        let damaged = #expect(throws: VaultError.self) { try Vault.open(backing: backing, deviceKeyPath: deviceKeyPath) }
        #expect(damaged == .rootMetadataDamaged && damaged?.exitCode == .damage)
    }
}
