import Foundation
import Glibc
import Testing
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCrypto

/// Connections a client keeps for request after request (docs/CONTROL.md, "Kept
/// connections"): served one after the other, closed when idle to make room for their own
/// uid, and never a way for one uid to take another's room.
@Suite(.serialized) struct ControlKeptConnectionTests {
    /// Holds `count` connections to the fixture's socket as `uid`, each after one `status`
    /// (so each is kept, idle); on "check" on its standard input, asks each one again.
    final class Holder {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var lines: [String] = []
        private var pending = Data()

        static let program = """
            import json, socket, struct, sys
            def ask(s):
                body = json.dumps({"request": "status"}).encode()
                try:
                    s.sendall(b"PFC\\x01" + struct.pack(">I", len(body)) + body)
                except OSError:
                    pass  # a refusal came first and closed the connection: it is read below
                head = b""
                while len(head) < 4:
                    chunk = s.recv(4 - len(head))
                    if not chunk: return None
                    head += chunk
                (length,) = struct.unpack(">I", head)
                reply = b""
                while len(reply) < length:
                    chunk = s.recv(length - len(reply))
                    if not chunk: return None
                    reply += chunk
                return json.loads(reply)
            kept = []
            for _ in range(int(sys.argv[2])):
                s = socket.socket(socket.AF_UNIX)
                s.connect(sys.argv[1])
                reply = ask(s)
                if reply and reply["reply"] == "status":
                    kept.append(s)
                else:
                    print("refused:", reply and reply["message"], flush=True)
            print("kept", len(kept), flush=True)
            for line in sys.stdin:
                alive = 0
                for s in kept:
                    try:
                        alive += ask(s) is not None
                    except OSError:
                        pass
                print("alive", alive, flush=True)
            """

        init(uid: uid_t, count: Int, fixture: ServerFixture) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/python3", "-c", Self.program,
                                 fixture.server.socketPath, String(count)]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.standardError
            try process.run()
        }

        /// The next line it prints, within 20 s.
        func line() -> String? {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { pending.removeSubrange(...newline) }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return nil }
                pending.append(data)
            }
            return nil
        }

        /// How many of its connections still answer.
        func alive() -> String? {
            input.fileHandleForWriting.write(Data("check\n".utf8))
            return line()
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    private func ask(_ socket: borrowing UnixSocket) throws -> ControlReply? {
        try socket.writing { sink throws(ControlWireError) in try ControlWire.write(.status, secrets: [], to: &sink) }
        return try socket.reply()
    }

    @Test func aConnectionServesRequestAfterRequest() throws {
        let fixture = try ServerFixture()
        let connection = try fixture.rawConnection()
        guard case .status(let first)? = try ask(connection), case .status(let second)? = try ask(connection),
              let firstCount = first.requestsServed else {
            Issue.record("a second request on the connection was not answered")
            return
        }
        #expect(second.requestsServed == firstCount + 1)
    }

    @Test func anIdleConnectionMakesRoomForAnotherOfItsUid() throws {
        let fixture = try ServerFixture()
        var kept: [SharedSocket] = []
        for _ in 0..<ControlAdmission.connectionsPerUser {
            let connection = SharedSocket(try fixture.rawConnection())
            kept.append(connection)
            #expect(try ask(connection.socket)?.uncounted == .status(fixture.handler.status()))
        }
        #expect(fixture.server.connectionCount == ControlAdmission.connectionsPerUser)
        // One more of the same uid is served: one of its idle connections is closed for it.
        let extra = SharedSocket(try fixture.rawConnection())
        kept.append(extra)
        #expect(try ask(extra.socket)?.uncounted == .status(fixture.handler.status()))
        let answering = kept.dropLast().filter { (try? ask($0.socket)).flatMap { $0 } != nil }.count
        #expect(answering == ControlAdmission.connectionsPerUser - 1)
    }

    /// Kept connections of other users fill their shared room and no more, never close one of
    /// another uid's, and leave root and the mounting user theirs.
    @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
    func otherUsersCannotCrowdOutOrCloseOthersKeptConnections() throws {
        let mountingUser: uid_t = 4242
        let fixture = try ServerFixture(mountingUser: mountingUser)
        var holders: [Holder] = []
        defer { holders.forEach { $0.stop() } }
        let others: [uid_t] = (1...4).map { 50_000 + $0 }
        for uid in others {
            let holder = try Holder(uid: uid, count: ControlAdmission.connectionsPerUser, fixture: fixture)
            holders.append(holder)
            #expect(holder.line() == "kept \(ControlAdmission.connectionsPerUser)")
        }
        #expect(fixture.server.connectionCount == ControlAdmission.otherUsersConnections)
        // A fifth uid finds the others' room full, and closes none of theirs for it.
        let late = try Holder(uid: 50_005, count: 1, fixture: fixture)
        holders.append(late)
        #expect(late.line()?.contains("busy with \(ControlAdmission.otherUsersConnections) control connections of other users") == true)
        #expect(late.line() == "kept 0")
        // A uid that holds its share gets one more by giving up one of its own idle ones.
        let more = try Holder(uid: others[0], count: 1, fixture: fixture)
        holders.append(more)
        #expect(more.line() == "kept 1")
        #expect(holders[0].alive() == "alive \(ControlAdmission.connectionsPerUser - 1)")
        for holder in holders[1..<others.count] { #expect(holder.alive() == "alive \(ControlAdmission.connectionsPerUser)") }
        // Root and the mounting user are served whatever the others keep.
        for uid in [0, mountingUser] {
            let status = try runProgram("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", builtProtfsctl,
                                                            "status", fixture.mountpoint],
                                        environment: ["XDG_RUNTIME_DIR": fixture.root], timeout: 15)
            #expect(status.status == 0, "\(status.stderr)")
        }
    }
}
