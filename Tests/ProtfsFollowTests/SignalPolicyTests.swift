import ProtfsBusTestSupport
@testable import ProtfsFollow
import Testing

/// Whom the follower obeys and what each signal makes it do, without a bus: only logind's
/// current unique name locks, only the bus driver moves that name, a unicast signal is
/// nobody's broadcast, and only the followed session's screen lock counts.
@Suite("follower signal policy")
struct SignalPolicyTests {
    static func attached() -> SignalPolicy {
        SignalPolicy(logindOwner: SignalMaker.logind, sessionPath: SignalMaker.session, lockedHint: false)
    }

    static func respond(_ policy: inout SignalPolicy, _ received: ReceivedSignal, hint: Bool? = nil) -> SignalPolicy.Response? {
        policy.respond(to: received) { _ in hint }
    }

    @Test("the followed session's Lock locks with the grace; another session's, another sender's or a unicast one does not")
    func sessionLock() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        #expect(Self.respond(&policy, try maker.lock()) == .lockWithGrace(because: "the session locked its screen (Lock)"))
        #expect(Self.respond(&policy, try maker.lock("/org/freedesktop/login1/session/_33")) == nil)
        #expect(Self.respond(&policy, try maker.lock(from: ":1.66")) == nil, "a user's forged Lock was obeyed")
        #expect(Self.respond(&policy, try maker.lock(to: ":1.10")) == nil, "a unicast Lock was obeyed")
        var detached = SignalPolicy(logindOwner: nil, sessionPath: SignalMaker.session)
        #expect(Self.respond(&detached, try maker.lock()) == nil, "obeyed logind before knowing its name")
    }

    @Test("PrepareForSleep(true) locks at once, PrepareForSleep(false) takes the inhibitor again; only from logind")
    func sleep() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        #expect(Self.respond(&policy, try maker.prepareForSleep(true)) == .lockBeforeSleep)
        #expect(Self.respond(&policy, try maker.prepareForSleep(false)) == .woke)
        #expect(Self.respond(&policy, try maker.prepareForSleep(true, from: ":1.66")) == nil)
        #expect(Self.respond(&policy, try maker.prepareForSleep(true, from: BusDriver.name)) == nil)
    }

    @Test("LockedHint locks when it becomes true, read from logind when only invalidated")
    func lockedHint() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        let locks = SignalPolicy.Response.lockWithGrace(because: "the session's LockedHint became true")
        #expect(Self.respond(&policy, try maker.lockedHint(true)) == locks)
        #expect(Self.respond(&policy, try maker.lockedHint(true)) == nil, "locked again without the hint going false")
        #expect(Self.respond(&policy, try maker.lockedHint(false)) == nil && !policy.lockedHint)
        #expect(Self.respond(&policy, try maker.lockedHint(nil, invalidated: ["LockedHint"]), hint: true) == locks)
        #expect(policy.lockedHint)
        var unread = Self.attached()
        #expect(Self.respond(&unread, try maker.lockedHint(nil, invalidated: ["LockedHint"]), hint: nil) == nil && !unread.lockedHint)
        #expect(Self.respond(&unread, try maker.lockedHint(nil, invalidated: ["Active"]), hint: true) == nil && !unread.lockedHint)
    }

    @Test("NameOwnerChanged moves logind's name only from the bus driver; after it, the old name is not obeyed")
    func nameOwnerChanged() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        #expect(Self.respond(&policy, try maker.nameOwnerChanged(Logind.name, old: SignalMaker.logind, new: ":1.66", from: ":1.66")) == nil)
        #expect(policy.logindOwner == SignalMaker.logind, "a user moved logind's name")
        #expect(Self.respond(&policy, try maker.nameOwnerChanged(Logind.name, old: SignalMaker.logind, new: "")) == .logindLeft)
        #expect(policy.logindOwner == nil)
        #expect(Self.respond(&policy, try maker.prepareForSleep(true)) == nil, "obeyed logind's old name")
        #expect(Self.respond(&policy, try maker.nameOwnerChanged(Logind.name, old: "", new: ":1.9")) == .logindReplaced)
        #expect(policy.logindOwner == ":1.9")
        #expect(Self.respond(&policy, try maker.prepareForSleep(true, from: ":1.9")) == .lockBeforeSleep)
        #expect(Self.respond(&policy, try maker.nameOwnerChanged("org.example.Other", old: "", new: ":1.12")) == nil)
        #expect(policy.logindOwner == ":1.9")
    }

    @Test("the session bus is obeyed for ActiveChanged alone; the system bus never for it")
    func screenSaver() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        #expect(Self.respond(&policy, try maker.screenSaver(true))
                == .lockWithGrace(because: "the screen saver became active (ActiveChanged)"))
        #expect(Self.respond(&policy, try maker.screenSaver(false)) == nil)
        #expect(Self.respond(&policy, try maker.screenSaver(true, from: SignalMaker.logind, on: .system)) == nil)
        let sleepOnSession = try maker.received(Logind.managerPath, Logind.managerInterface, "PrepareForSleep", from: ":1.40",
                                                on: .session) { MessageWriting.append($0, bool: true) }
        #expect(Self.respond(&policy, sleepOnSession) == nil, "the session bus put the machine to sleep")
    }

    @Test("a malformed signal from whom it may come is logged and ignored")
    func malformed() throws {
        let maker = try SignalMaker()
        var policy = Self.attached()
        let noArgument = try maker.received(Logind.managerPath, Logind.managerInterface, "PrepareForSleep", from: SignalMaker.logind)
        guard case .ignored = Self.respond(&policy, noArgument) else { Issue.record("a malformed signal was obeyed"); return }
        let forged = try maker.received(Logind.managerPath, Logind.managerInterface, "PrepareForSleep", from: ":1.66")
        #expect(Self.respond(&policy, forged) == nil, "a forged malformed signal was logged")
    }
}
