import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto

@Suite struct DeviceKeyTests {
    @Test func createsKeyAndDirectoryPrivately() throws {
        let dir = TemporaryDirectory()
        let file = DeviceKeyFile(path: dir.child("a/b/device.key"))
        let (created, wasCreated) = try file.loadOrCreate()
        #expect(wasCreated)
        let st = try dir.openDirectory().status(of: "a/b/device.key")
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(st.st_size == 32)
        #expect(try dir.openDirectory().status(of: "a/b").st_mode & 0o777 == 0o700)
        let (loaded, createdAgain) = try file.loadOrCreate()
        #expect(!createdAgain)
        #expect(loaded.isEqual(to: created))
        #expect(try dir.read("a/b/device.key") == created.testBytes)
    }

    @Test func refusesKeyReadableByOthers() throws {
        let dir = TemporaryDirectory()
        try dir.write(SecureRandom.bytes(32), to: "device.key", mode: 0o640)
        #expect(throws: VaultError.deviceKeyInsecure(path: dir.child("device.key"), mode: 0o100640)) {
            try DeviceKeyFile(path: dir.child("device.key")).load()
        }
        try dir.write(SecureRandom.bytes(32), to: "device.key", mode: 0o602)
        #expect(throws: VaultError.self) { try DeviceKeyFile(path: dir.child("device.key")).load() }
    }

    @Test func refusesWrongSize() throws {
        let dir = TemporaryDirectory()
        for size in [0, 31, 33, 64] {
            try dir.write(SecureRandom.bytes(size), to: "device.key")
            #expect(throws: VaultError.deviceKeyWrongSize(path: dir.child("device.key"), size: size)) {
                try DeviceKeyFile(path: dir.child("device.key")).load()
            }
        }
    }

    @Test func missingKeyIsNotFound() {
        let dir = TemporaryDirectory()
        let error = #expect(throws: VaultError.self) { try DeviceKeyFile(path: dir.child("none")).load() }
        #expect(error == .deviceKeyMissing(path: dir.child("none")))
        #expect(error?.exitCode == .notFound)
    }

    @Test func defaultPathFollowsTheUser() {
        #expect(DeviceKeyFile.defaultPath(effectiveUserID: 0) == "/var/lib/protfs/device.key")
        #expect(DeviceKeyFile.defaultPath(effectiveUserID: 1000).hasSuffix("/protfs/device.key"))
        #expect(DeviceKeyFile(path: "/x/y/device.key").directory == "/x/y")
        #expect(DeviceKeyFile(path: "device.key").directory == ".")
    }
}
