import Foundation
import Glibc
import ProtfsDomain
import Synchronization
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// The lock controller without FUSE: a real vault, the vault filesystem, and a page cache
/// that records what the transition asked it to drop.
@Suite struct LockControllerTests {
    final class RecordingCache: KernelPageCache {
        let drops = Mutex<[[ProtectionClass?]]>([])
        let nodes: Mutex<[BackingNode]>
        init(nodes: [BackingNode]) { self.nodes = Mutex(nodes) }
        func dropPages(where selected: (any CachedNode) -> Bool) {
            let chosen = nodes.withLock { $0.filter { selected($0) }.map { $0.cachedHeader?.protectionClass } }
            drops.withLock { $0.append(chosen) }
        }
    }

    /// Runs `duringSealing` when the lock's step 2 asks for the first cache drop: the end
    /// of the grace, when requests from other threads are still served.
    final class SealingCache: KernelPageCache {
        let duringSealing: @Sendable () -> Void
        let called = Atomic<Bool>(false)
        init(duringSealing: @escaping @Sendable () -> Void) { self.duringSealing = duringSealing }
        func dropPages(where selected: (any CachedNode) -> Bool) {
            if !called.exchange(true, ordering: .relaxed) { duringSealing() }
        }
    }

    struct Fixture {
        let directory: TemporaryDirectory
        let vault: Vault
        let controller: LockController
        let fileSystem: VaultFileSystem

        init(grace: Duration = .zero, unlocked: Bool = true, contentAEAD: ContentAEAD = .preferredOnThisCPU) throws {
            directory = TemporaryDirectory()
            let backing = directory.child("backing")
            _ = try Vault.initialize(backing: backing, protectionClass: .complete, deviceKeyPath: directory.child("device.key"),
                                     passcode: { passcode("right") }, kdf: .interactive, contentAEAD: contentAEAD)
            vault = try Vault.open(backing: backing, deviceKeyPath: directory.child("device.key"))
            if unlocked { try vault.unlock(passcode: passcode("right")) }
            controller = LockController(vault: vault, initialState: unlocked ? .unlocked : .beforeFirstUnlock,
                                        grace: grace, autolock: .zero)
            fileSystem = try VaultFileSystem(vault: vault, controller: controller)
        }

        var caller: Caller { Caller(uid: 0, gid: 0, pid: getpid()) }
    }

    func read(_ fs: VaultFileSystem, _ handle: OpenFileHandle) throws(Errno) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = try buffer.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fs.read(handle, into: b, at: 0) } }.get()
        return Array(buffer[0..<n])
    }

    func write(_ fs: VaultFileSystem, _ handle: OpenFileHandle, _ text: String) throws(Errno) {
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try fs.write(handle, b, at: 0) } }.get()
    }

    @Test(arguments: ContentAEAD.allCases)
    func lockNowTakesCompleteHandlesAwayAndUnlockGivesThemBack(_ aead: ContentAEAD) throws {
        let f = try Fixture(contentAEAD: aead)
        let (node, handle, _) = try f.fileSystem.createFile(Array("a".utf8), in: f.fileSystem.root, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, handle, "secret")
        #expect(f.vault.keyring.fileKeys.keySchedules(of: .complete) == 1, "the write made the file's cipher context")
        let cache = RecordingCache(nodes: [node])
        f.controller.attach(contentKeys: f.fileSystem, cache: cache)
        f.controller.lock(.now)
        #expect(f.controller.state == .locked)
        #expect(throws: Errno.permissionDenied) { try read(f.fileSystem, handle) }
        #expect(throws: Errno.permissionDenied) { try write(f.fileSystem, handle, "more") }
        #expect(throws: Errno.permissionDenied) { try f.fileSystem.open(node, writable: false) }
        #expect(f.vault.keyring.key(for: .complete) == nil && f.vault.keyring.key(for: .completeUnlessOpen) == nil)
        #expect(node.content.state.withLock { $0.file } == nil, "the per-file key is gone")
        #expect(f.vault.keyring.fileKeys.keySchedules(of: .complete) == 0, "and its key schedule")
        // Both cache drops of the sequence selected the complete file.
        #expect(cache.drops.withLock { $0 } == [[.complete], [.complete]])
        try f.controller.unlock(passcode: passcode("right"))
        #expect(f.controller.state == .unlocked)
        #expect(try read(f.fileSystem, handle) == Array("secret".utf8))
        f.fileSystem.release(handle)
    }

    @Test func graceKeepsCompleteAvailableAndUnlockCancelsTheLock() throws {
        let f = try Fixture(grace: .seconds(30))
        let (_, handle, _) = try f.fileSystem.createFile(Array("a".utf8), in: f.fileSystem.root, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, handle, "x")
        f.controller.attach(contentKeys: f.fileSystem, cache: RecordingCache(nodes: []))
        let events = Mutex<[LockEvent]>([])
        #expect(f.controller.watch { event in events.withLock { $0.append(event) }; return true } == .unlocked)
        f.controller.lock(.normal)
        #expect(f.controller.state == .locking)
        #expect((f.controller.graceSecondsLeft ?? 0) > 25)
        #expect(try read(f.fileSystem, handle) == Array("x".utf8))
        f.controller.lock(.normal)  // does not restart the grace
        try f.controller.unlock(passcode: passcode("right"))
        #expect(f.controller.state == .unlocked)
        f.controller.lock(.normal)
        f.controller.lock(.now)
        #expect(f.controller.state == .locked)
        #expect(events.withLock { $0 } == [.willBecomeUnavailable, .didBecomeAvailable, .willBecomeUnavailable, .didBecomeUnavailable])
        f.fileSystem.release(handle)
    }

    @Test func lockChangesNothingBeforeFirstUnlockAndWhenLocked() throws {
        let f = try Fixture(unlocked: false)
        f.controller.attach(contentKeys: f.fileSystem, cache: RecordingCache(nodes: []))
        f.controller.lock(.normal)
        f.controller.lock(.now)
        f.controller.lock(.wait)
        #expect(f.controller.state == .beforeFirstUnlock)
        #expect(throws: VaultError.self) { try f.controller.unlock(passcode: passcode("wrong")) }
        #expect(f.controller.state == .beforeFirstUnlock)
        try f.controller.unlock(passcode: passcode("right"))
        f.controller.lock(.now)
        f.controller.lock(.normal)
        #expect(f.controller.state == .locked)
    }

    @Test func completeUnlessOpenHandlesSurviveTheLockAndNewFilesCanBeCreated() throws {
        let f = try Fixture()
        let dir = try f.fileSystem.makeDirectory(Array("b".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        try f.fileSystem.reclass(dir, to: .completeUnlessOpen)
        let (node, handle, _) = try f.fileSystem.createFile(Array("db".utf8), in: dir, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, handle, "before")
        f.controller.attach(contentKeys: f.fileSystem, cache: RecordingCache(nodes: [node]))
        f.controller.lock(.now)
        try write(f.fileSystem, handle, "after!")
        #expect(try read(f.fileSystem, handle) == Array("after!".utf8))
        #expect(throws: Errno.permissionDenied) { try f.fileSystem.open(node, writable: false) }
        let (_, fresh, _) = try f.fileSystem.createFile(Array("journal".utf8), in: dir, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, fresh, "created while locked")
        f.fileSystem.release(fresh)
        f.fileSystem.release(handle)
        try f.controller.unlock(passcode: passcode("right"))
        let reopened = try f.fileSystem.open(f.fileSystem.lookup(Array("journal".utf8), in: dir), writable: false)
        #expect(try read(f.fileSystem, reopened) == Array("created while locked".utf8))
        f.fileSystem.release(reopened)
    }
    /// Issue 15, item 4: opens and releases racing the lock (on the same files, so an open
    /// meets a release of the same node) must never leave a `complete` file's key outside
    /// the set that step 3 wipes. After every `lock --now`, no key of a `complete` file is left.
    @Test func noKeyOfACompleteFileOutlivesTheLockWhateverOpensAndReleasesRaceIt() throws {
        let f = try Fixture()
        let keys = try f.vault.verifyPasscode(passcode("right"))  // once: unlocks below skip Argon2id
        let nodes = try (0..<3).map { (i) throws(Errno) -> BackingNode in
            let (node, handle, _) = try f.fileSystem.createFile(Array("f\(i)".utf8), in: f.fileSystem.root, mode: 0o600, caller: f.caller)
            try write(f.fileSystem, handle, "secret \(i)")
            f.fileSystem.release(handle)
            return node
        }
        // A `completeUnlessOpen` handle held throughout keeps its key: the one key allowed.
        let journalDirectory = try f.fileSystem.makeDirectory(Array("b".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        try f.fileSystem.reclass(journalDirectory, to: .completeUnlessOpen)
        let (_, journal, _) = try f.fileSystem.createFile(Array("journal".utf8), in: journalDirectory, mode: 0o600, caller: f.caller)
        f.controller.attach(contentKeys: f.fileSystem, cache: RecordingCache(nodes: nodes))
        let stop = Atomic<Bool>(false)
        let workers = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: workers) { [fs = f.fileSystem] in
                var turn = worker
                while !stop.load(ordering: .relaxed) {
                    turn += 1
                    guard let handle = try? fs.open(nodes[turn % nodes.count], writable: false) else { continue }
                    _ = try? read(fs, handle)
                    fs.release(handle)
                }
            }
        }
        var leftOver: [Int] = []
        for _ in 0..<2000 {
            f.controller.lock(.now)
            leftOver.append(f.vault.keyring.fileKeys.count(of: .complete))
            f.controller.unlock(installing: keys)
            usleep(50)
        }
        stop.store(true, ordering: .relaxed)
        workers.wait()
        f.controller.lock(.now)
        #expect(f.vault.keyring.fileKeys.count(of: .complete) == 0)
        #expect(f.vault.keyring.fileKeys.count(of: .completeUnlessOpen) == 1)
        f.fileSystem.release(journal)
        #expect(f.vault.keyring.fileKeys.count(of: .completeUnlessOpen) == 0)
        let missed = leftOver.count { $0 > 0 }
        #expect(missed == 0, "keys of complete files alive after \(missed) of \(leftOver.count) locks")
    }
    /// The count of live keys goes by a file's class now: a file re-classed while open is
    /// counted, and kept or wiped by the lock, as a file of its new class.
    @Test func aFileReclassedWhileOpenIsCountedByItsNewClass() throws {
        let f = try Fixture()
        let (node, handle, _) = try f.fileSystem.createFile(Array("f".utf8), in: f.fileSystem.root, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, handle, "was complete")
        f.controller.attach(contentKeys: f.fileSystem, cache: RecordingCache(nodes: [node]))
        #expect(f.vault.keyring.fileKeys.count(of: .complete) == 1)
        try f.fileSystem.reclass(node, to: .none)
        #expect(f.vault.keyring.fileKeys.count(of: .complete) == 0)
        #expect(f.vault.keyring.fileKeys.count(of: .none) == 1)
        f.controller.lock(.now)
        #expect(f.vault.keyring.fileKeys.count(of: .none) == 1, "a none file keeps its key through the lock")
        #expect(try read(f.fileSystem, handle) == Array("was complete".utf8))
        f.fileSystem.release(handle)
        #expect(f.vault.keyring.fileKeys.count(of: .none) == 0)
    }

    /// Issue 15, item 5: once the grace has ended (`sealing`, reported as `locking`), no file
    /// moves out of `complete`, which would take it out of the wipe, nor into it.
    @Test func noReclassInOrOutOfCompleteOnceTheGraceHasEnded() throws {
        let f = try Fixture()
        let (secret, handle, _) = try f.fileSystem.createFile(Array("secret".utf8), in: f.fileSystem.root, mode: 0o600, caller: f.caller)
        try write(f.fileSystem, handle, "secret")
        let plainDirectory = try f.fileSystem.makeDirectory(Array("d".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        try f.fileSystem.reclass(plainDirectory, to: .none)
        let (plain, plainHandle, _) = try f.fileSystem.createFile(Array("plain".utf8), in: plainDirectory, mode: 0o600, caller: f.caller)
        f.fileSystem.release(plainHandle)
        let outcomes = Mutex<[String: Errno?]>([:])
        f.controller.attach(contentKeys: f.fileSystem, cache: SealingCache { [fs = f.fileSystem] in
            #expect(fs.controller.state == .locking)
            for (name, node, target) in [("out", secret, ProtectionClass.none), ("in", plain, .complete),
                                         ("aside", plain, .completeUnlessOpen)] {
                let outcome: Errno?
                do throws(Errno) { try fs.reclass(node, to: target); outcome = nil } catch { outcome = error }
                outcomes.withLock { $0[name] = outcome }
            }
        })
        f.controller.lock(.now)
        #expect(f.controller.state == .locked)
        #expect(outcomes.withLock { $0 } == ["out": .permissionDenied, "in": .permissionDenied, "aside": nil])
        #expect(try f.fileSystem.protectionClass(of: secret) == .complete)
        #expect(try f.fileSystem.protectionClass(of: plain) == .completeUnlessOpen)
        #expect(f.vault.keyring.fileKeys.count(of: .complete) == 0)
        #expect(throws: Errno.permissionDenied) { try read(f.fileSystem, handle) }
        f.fileSystem.release(handle)
    }
}
