@testable import ProtfsCore
import ProtfsDomain
import ProtfsSystem
@testable import ProtfsFormat
import Testing
import ProtfsTestSupport

@Suite struct VaultStateTests {
    @Test func delayTableMatchesTheSpec() {
        let expected = [0, 0, 0, 0, 0, 60, 300, 900, 900, 3600, 3600, 3600]
        #expect((0..<expected.count).map { WrongPasscodeDelays.nominalDelay(afterFailures: $0) } == expected.map { .seconds($0) })
    }

    /// A moment `offset` after the start of a test's timeline, on one boot (both clocks agree).
    func at(_ offset: Duration, boot: String = "boot-a") -> AttemptClock {
        AttemptClock(wall: .seconds(1_000_000) + offset, sinceBoot: .seconds(100) + offset, bootID: boot)
    }

    /// A state beside a new device key path, as `protfs init` leaves it.
    func created(in dir: TemporaryDirectory, vaultID: ObjectID = .random()) throws -> VaultState {
        var state = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        #expect(state.isMissing)
        try state.record(generation: 1)
        #expect(!state.isMissing && state.failedAttempts == 0 && state.generation == 1)
        return state
    }

    @Test func countsBeforeTheHashAndPersists() throws {
        let dir = TemporaryDirectory()
        let deviceKey = DeviceKeyFile(path: dir.child("device.key"))
        let vaultID = ObjectID.random()
        var state = try created(in: dir, vaultID: vaultID)
        for i in 1...4 {
            try state.beginPasscodeAttempt(now: at(.seconds(i)))
            #expect(state.retryAfterSeconds(now: at(.seconds(i))) == nil)
        }
        try state.beginPasscodeAttempt(now: at(.seconds(10)))  // the 5th failure
        #expect(state.failedAttempts == 5)
        let delay = WrongPasscodeDelays.delay(afterFailures: 5)

        // A fresh load (a restarted daemon) sees the same count and delay.
        var reloaded = try VaultState.load(beside: deviceKey, vaultID: vaultID)
        #expect(reloaded == state)
        #expect(reloaded.retryAfterSeconds(now: at(.seconds(11))) == (delay - .seconds(1)).secondsRoundedUp)
        // During the delay every attempt is refused and not counted.
        #expect(throws: VaultError.rateLimited(retryAfterSeconds: (delay - .seconds(1)).secondsRoundedUp)) {
            try reloaded.beginPasscodeAttempt(now: at(.seconds(11)))
        }
        #expect(reloaded.failedAttempts == 5)
        #expect(try VaultState.load(beside: deviceKey, vaultID: vaultID).failedAttempts == 5)
        // After it, the next failure (the 6th) starts the next delay.
        try reloaded.beginPasscodeAttempt(now: at(.seconds(10) + delay))
        #expect(reloaded.retryAfterSeconds(now: at(.seconds(10) + delay)) == WrongPasscodeDelays.delay(afterFailures: 6).secondsRoundedUp)
        try reloaded.recordSuccess()
        #expect(try VaultState.load(beside: deviceKey, vaultID: vaultID).failedAttempts == 0)
    }

    /// Issue 15: the delay ran on the wall clock only, so a clock set back restarted it in
    /// full. Within a boot it now runs on the boot clock; across a reboot a clock set back can
    /// at worst restart it, never make it longer than its length.
    @Test func aClockSetBackDoesNotStretchTheDelay() throws {
        let dir = TemporaryDirectory()
        var state = try created(in: dir)
        for _ in 1...5 { try state.beginPasscodeAttempt(now: at(.seconds(0))) }
        let delay = WrongPasscodeDelays.delay(afterFailures: 5).secondsRoundedUp
        var setBack = at(.seconds(30))
        setBack.wall -= .seconds(4000)
        #expect(state.retryAfterSeconds(now: setBack) == delay - 30)
        var setForward = at(.seconds(30))
        setForward.wall += .seconds(4000)
        #expect(state.retryAfterSeconds(now: setForward) == delay - 30)
        // After a reboot the boot clock starts again: the wall clock it is, never beyond the delay.
        #expect(state.retryAfterSeconds(now: AttemptClock(wall: .seconds(1_000_000 - 4000), sinceBoot: .seconds(5), bootID: "boot-b")) == delay)
        #expect(state.retryAfterSeconds(now: AttemptClock(wall: .seconds(1_000_000 + 20), sinceBoot: .seconds(5), bootID: "boot-b")) == delay - 20)
    }

    /// Issue 15: a deleted state file was a fresh record, its counter at zero.
    @Test func aMissingRecordRefusesPasscodesUntilRecreated() throws {
        let dir = TemporaryDirectory()
        let vaultID = ObjectID.random()
        var state = try created(in: dir, vaultID: vaultID)
        for i in 1...3 { try state.beginPasscodeAttempt(now: at(.seconds(i))) }
        try dir.openDirectory().removeFile("vaults/\(vaultID).state")
        var reloaded = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        #expect(reloaded.isMissing)
        #expect(throws: VaultError.stateMissing(path: state.path)) { try reloaded.beginPasscodeAttempt(now: at(.seconds(10))) }
        #expect(throws: VaultError.stateMissing(path: state.path)) { try state.beginPasscodeAttempt(now: at(.seconds(10))) }
        #expect(try reloaded.recreate(generation: 1))
        #expect(reloaded.failedAttempts == WrongPasscodeDelays.firstDelayedFailure - 1 && reloaded.generation == 1)
        #expect(try !reloaded.recreate(generation: 1), "an existing record is left alone")
        try reloaded.beginPasscodeAttempt(now: at(.seconds(20)))
        #expect(reloaded.retryAfterSeconds(now: at(.seconds(20))) == WrongPasscodeDelays.delay(afterFailures: 5).secondsRoundedUp)
    }

    /// Issue 15: each process kept its own copy of the counter and wrote it back over the
    /// other's; two daemons of one vault (copies of its backing directory) had twice the
    /// free attempts.
    @Test func twoProcessesOfAVaultShareOneCounter() throws {
        let dir = TemporaryDirectory()
        let vaultID = ObjectID.random()
        _ = try created(in: dir, vaultID: vaultID)
        var first = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        var second = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID)
        for i in 0 ..< WrongPasscodeDelays.firstDelayedFailure {
            if i % 2 == 0 { try first.beginPasscodeAttempt(now: at(.seconds(i))) } else { try second.beginPasscodeAttempt(now: at(.seconds(i))) }
        }
        #expect(first.failedAttempts == WrongPasscodeDelays.firstDelayedFailure)
        #expect(second.refreshed().failedAttempts == WrongPasscodeDelays.firstDelayedFailure)
        // The fifth failure (at 4 s) started the first delay; 6 s of it have passed.
        #expect(throws: VaultError.rateLimited(retryAfterSeconds: WrongPasscodeDelays.delay(afterFailures: 5).secondsRoundedUp - 6)) {
            try second.beginPasscodeAttempt(now: at(.seconds(10)))
        }
        #expect(second.failedAttempts == WrongPasscodeDelays.firstDelayedFailure)
        try second.recordSuccess()
        #expect(try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: vaultID).failedAttempts == 0)
    }

    @Test func stateFileIsPrivateJSON() throws {
        let dir = TemporaryDirectory()
        let vaultID = ObjectID.random()
        var state = try created(in: dir, vaultID: vaultID)
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
