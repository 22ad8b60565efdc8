import Testing
@testable import ProtfsCore

@Suite struct VaultStateTests {
    @Test func delayTableMatchesTheSpec() {
        let expected = [0, 0, 0, 0, 0, 60, 300, 900, 900, 3600, 3600, 3600]
        #expect((0..<expected.count).map { RateLimiter.nominalDelay(afterFailures: $0) } == expected)
    }

    @Test func countsBeforeTheHashAndPersists() throws {
        let dir = TemporaryDirectory()
        let deviceKey = DeviceKeyFile(path: dir.child("device.key"))
        let vaultID = ObjectID.random()
        var state = try VaultState.load(beside: deviceKey, vaultID: vaultID)
        #expect(state.failedAttempts == 0 && state.generation == 0)
        let t0 = 1_000_000.0
        for i in 1...4 {
            try state.beginPasscodeAttempt(now: t0 + Double(i))
            #expect(state.retryAfterSeconds(now: t0 + Double(i)) == nil)
        }
        try state.beginPasscodeAttempt(now: t0 + 10)  // the 5th failure
        #expect(state.failedAttempts == 5)
        let delay = RateLimiter.delay(afterFailures: 5)

        // A fresh load (a restarted daemon) sees the same count and delay.
        var reloaded = try VaultState.load(beside: deviceKey, vaultID: vaultID)
        #expect(reloaded == state)
        #expect(reloaded.retryAfterSeconds(now: t0 + 11) == Int((delay - 1).rounded(.up)))
        // During the delay every attempt is refused and not counted.
        #expect(throws: VaultError.rateLimited(retryAfterSeconds: Int((delay - 1).rounded(.up)))) {
            try reloaded.beginPasscodeAttempt(now: t0 + 11)
        }
        #expect(reloaded.failedAttempts == 5)
        #expect(try VaultState.load(beside: deviceKey, vaultID: vaultID).failedAttempts == 5)
        // After it, the next failure (the 6th) starts the next delay.
        try reloaded.beginPasscodeAttempt(now: t0 + 10 + delay)
        #expect(reloaded.retryAfterSeconds(now: t0 + 10 + delay) == Int(RateLimiter.delay(afterFailures: 6).rounded(.up)))
        try reloaded.recordSuccess()
        #expect(try VaultState.load(beside: deviceKey, vaultID: vaultID).failedAttempts == 0)
    }

    @Test func aClockSetBackDoesNotStretchTheDelay() throws {
        let dir = TemporaryDirectory()
        var state = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: .random())
        for _ in 1...5 { try state.beginPasscodeAttempt(now: 5000) }
        #expect(state.retryAfterSeconds(now: 1000) == Int(RateLimiter.delay(afterFailures: 5).rounded(.up)))
    }

    @Test func stateFileIsPrivateJSON() throws {
        let dir = TemporaryDirectory()
        let vaultID = ObjectID.random()
        var state = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        try state.record(generation: 7)
        let name = "vaults/\(vaultID).state"
        #expect(try dir.openDirectory().status(of: name).st_mode & 0o777 == 0o600)
        let text = String(decoding: try dir.read(name), as: UTF8.self)
        #expect(text.contains("\"generation\":7") && text.contains("\"failedAttempts\":0") && text.contains("\"lastFailure\""))
        try dir.write(Array("{nope".utf8), to: name)
        #expect(throws: VaultError.stateDamaged(path: dir.child(name))) {
            try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        }
    }
}
