import Foundation
import Glibc
import Testing
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore

/// The bounds on control connections (issue 15: 64 `protfsctl watch` of user nobody took
/// every connection, and root's `protfsctl lock` was refused as busy for as long as they
/// stayed), with the real `protfsctl` run as other uids (`setpriv`).
@Suite(.serialized) struct ControlAdmissionTests {
    static let mountingUser: uid_t = 4242

    /// A `protfsctl watch` running as `uid`, its output in files until it ends.
    final class Watcher {
        let process = Process()
        let output: URL
        let errors: URL

        init(uid: uid_t, fixture: ServerFixture) throws {
            output = URL(fileURLWithPath: fixture.root + "/watch-\(UUID().uuidString).out")
            errors = output.appendingPathExtension("err")
            for file in [output, errors] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", builtProtfsctl, "watch", fixture.mountpoint]
            process.environment = ["XDG_RUNTIME_DIR": fixture.root, "PATH": "/usr/bin:/bin"]
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = try FileHandle(forWritingTo: errors)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        /// Waits until the watch is subscribed (true) or refused (false, having ended).
        func admitted() -> Bool {
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if (try? String(contentsOf: output, encoding: .utf8))?.hasPrefix("state ") == true { return true }
                if !process.isRunning { return false }
                usleep(5_000)
            }
            return false
        }

        var refusal: String {
            process.waitUntilExit()
            return (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        }

        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    private func protfsctl(as uid: uid_t, _ arguments: [String], fixture: ServerFixture) throws -> (status: Int32, stderr: String) {
        let result = try runProgram("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", builtProtfsctl]
                                        + arguments, environment: ["XDG_RUNTIME_DIR": fixture.root], timeout: 15)
        return (result.status, result.stderr)
    }

    @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
    func otherUsersCannotCrowdOutRootOrTheMountingUser() throws {
        let fixture = try ServerFixture(mountingUser: Self.mountingUser)
        var watchers: [Watcher] = []
        defer { watchers.forEach { $0.stop() } }
        // nobody, then uids without an account (SO_PEERCRED knows only numbers): each tries one
        // watch more than its share, and together they want more than the other users' share.
        let others: [uid_t] = [65534] + (1...8).map { 50_000 + $0 }
        var admitted: [uid_t: Int] = [:]
        var refusals: [String] = []
        for uid in others {
            for _ in 0 ... ControlAdmission.watchesPerUser {
                let watcher = try Watcher(uid: uid, fixture: fixture)
                watchers.append(watcher)
                if watcher.admitted() { admitted[uid, default: 0] += 1 } else { refusals.append(watcher.refusal) }
            }
            if uid == 65534 {
                // A user at its cap of watches may still ask for the status: watches leave it room.
                let status = try protfsctl(as: uid, ["status", fixture.mountpoint], fixture: fixture)
                #expect(status.status == 0, "\(status.stderr)")
            }
        }
        #expect(admitted[65534] == ControlAdmission.watchesPerUser, "\(admitted)")
        #expect(admitted.values.allSatisfy { $0 <= ControlAdmission.watchesPerUser }, "\(admitted)")
        #expect(admitted.values.reduce(0, +) == ControlAdmission.otherUsersConnections, "\(admitted)")
        #expect(refusals.contains { $0.contains("uid 65534 already watches \(fixture.mountpoint) 8 times") }, "\(refusals)")
        #expect(refusals.contains { $0.contains("busy with 64 control connections of other users") }, "\(refusals)")

        // Root and the mounting user are served whatever the others hold.
        let rootLock = try protfsctl(as: 0, ["lock", "--now", fixture.mountpoint], fixture: fixture)
        #expect(rootLock.status == 0, "\(rootLock.stderr)")
        let ownerLock = try protfsctl(as: Self.mountingUser, ["lock", fixture.mountpoint], fixture: fixture)
        #expect(ownerLock.status == 0, "\(ownerLock.stderr)")
        #expect(fixture.handler.record.withLock { $0.locks } == [.now, .normal])
    }

    @Test func oneUserHoldsAtMostItsShareOfConnections() throws {
        let fixture = try ServerFixture()
        // Idle connections hold their threads until the request timeout.
        var idle: [SharedSocket] = []
        for _ in 0..<ControlAdmission.connectionsPerUser { idle.append(SharedSocket(try fixture.rawConnection())) }
        let deadline = Date().addingTimeInterval(10)
        while fixture.server.connectionCount < ControlAdmission.connectionsPerUser && Date() < deadline { usleep(5_000) }
        let extra = try fixture.rawConnection()
        guard case .failure(let failure)? = try extra.reply() else {
            Issue.record("a connection beyond the share was not refused")
            return
        }
        #expect(failure.message.contains("uid \(getuid()) already holds \(ControlAdmission.connectionsPerUser) control connections"),
                "\(failure.message)")
        // The client shows the reason, also when the refusal came before its request went out.
        for _ in 0 ..< 20 {
            let refusal = #expect(throws: ControlFailure.self) { try fixture.client().send(.status) }
            #expect(refusal?.message.contains("already holds") == true, "\(refusal?.message ?? "")")
        }
        idle = []  // closes them
        while fixture.server.connectionCount > 0 && Date() < deadline { usleep(5_000) }
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    /// Item requests hold the matched items and their reply in memory: a uid has at most its
    /// share in flight, the other users together theirs, and root and the mounting user keep
    /// their own room whatever the others hold (issue 38: four listings took the daemon down).
    @Test func itemRequestsInFlightAreBoundedWithARoomForRootAndTheOwner() {
        let admission = ControlAdmission(mountpoint: "/m", mountingUser: Self.mountingUser)
        func serving(_ uid: uid_t) -> ControlAdmission.Tenant { ControlAdmission.Tenant(uid: uid, servingItem: true) }
        let own = Array(repeating: serving(1000), count: ControlAdmission.itemRequestsPerUser)
        #expect(admission.refusal(ofItemRequestBy: 1000, among: own)?.contains("already has") == true)
        #expect(admission.refusal(ofItemRequestBy: 1000, among: own.map { ControlAdmission.Tenant(uid: $0.uid) }) == nil)
        let others = (0 ..< ControlAdmission.otherUsersItemRequests).map { serving(2000 + uid_t($0)) }
        #expect(admission.refusal(ofItemRequestBy: 3000, among: others)?.contains("other users") == true)
        for privileged in [0, Self.mountingUser] {
            #expect(admission.refusal(ofItemRequestBy: privileged, among: others + own) == nil)
        }
    }
}
