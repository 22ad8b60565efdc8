import ProtfsBusTestSupport
@testable import ProtfsFollow
import Testing

/// The signals the follower subscribes to, decoded from messages as they arrive: each by
/// its interface and member together, with the sender and unicast bit the bus stamped.
@Suite("follower signal decoding")
struct SignalDecodingTests {
    @Test("logind's, the screen saver's and the bus driver's signals decode to what they say")
    func decodes() throws {
        let maker = try SignalMaker()
        #expect(try maker.lock().signal == .sessionLock(path: SignalMaker.session))
        #expect(try maker.prepareForSleep(true).signal == .prepareForSleep(true))
        #expect(try maker.prepareForSleep(false).signal == .prepareForSleep(false))
        #expect(try maker.screenSaver(true).signal == .screenSaverActive(true))
        #expect(try maker.nameOwnerChanged(Logind.name, old: ":1.3", new: ":1.9").signal
                == .nameOwnerChanged(name: Logind.name, newOwner: ":1.9"))
        #expect(try maker.lockedHint(true).signal
                == .sessionProperties(path: SignalMaker.session, lockedHint: true, lockedHintInvalidated: false))
        #expect(try maker.lockedHint(nil, invalidated: ["LockedHint"]).signal
                == .sessionProperties(path: SignalMaker.session, lockedHint: nil, lockedHintInvalidated: true))
        // Another interface's properties, or a Lock of another interface: not the follower's.
        #expect(try maker.lockedHint(true, interface: "org.freedesktop.login1.User").signal == .other)
        #expect(try maker.received(SignalMaker.session, "org.example.Door", "Lock", from: SignalMaker.logind).signal == .other)
    }

    @Test("arguments not of the documented form are malformed, never obeyed as a value")
    func malformed() throws {
        let maker = try SignalMaker()
        let noArgument = try maker.received(Logind.managerPath, Logind.managerInterface, "PrepareForSleep", from: SignalMaker.logind)
        #expect(noArgument.signal == .malformed("PrepareForSleep from \(Logind.managerPath) with arguments '', not as documented"))
        let text = try maker.received("/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged",
                                      from: ":1.40", on: .session) { MessageWriting.append($0, "s", "true") }
        guard case .malformed = text.signal else { Issue.record("decoded \(text.signal)"); return }
    }

    @Test("the sender and whether the signal was addressed to this connection alone are kept")
    func senderAndUnicast() throws {
        let maker = try SignalMaker()
        let broadcast = try maker.lock()
        #expect(broadcast.sender == SignalMaker.logind && !broadcast.unicast && broadcast.bus == .system)
        let addressed = try maker.lock(from: ":1.66", to: ":1.10")
        #expect(addressed.sender == ":1.66" && addressed.unicast)
    }
}
