import Foundation
import Glibc
import Testing
import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore

/// SO_PEERCRED tiers, with the real `protfsctl` run as another user (`setpriv`): anyone may
/// ask for the status and watch; only the owner (by default the mounting user) and root may
/// change anything or learn the backing directory and the daemon's pid.
@Suite struct ControlPeerTests {
    static let nobody: uid_t = 65534

    /// `protfsctl` as uid/gid 65534 without supplementary groups, finding the test socket
    /// through XDG_RUNTIME_DIR.
    private func protfsctl(asNobody: Bool, _ arguments: [String], fixture: ServerFixture,
                           stdin: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
        let command = asNobody
            ? ["/usr/bin/setpriv", "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", builtProtfsctl]
            : [builtProtfsctl]
        return try runProgram(command[0], Array(command.dropFirst()) + arguments,
                              environment: ["XDG_RUNTIME_DIR": fixture.root], stdin: stdin)
    }

    @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
    func anotherUserMayReadButNotChange() throws {
        let fixture = try ServerFixture(mountingUser: 0)
        let status = try protfsctl(asNobody: true, ["status", fixture.mountpoint, "--json"], fixture: fixture)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains(#""state":"unlocked""#))
        for arguments in [["lock", fixture.mountpoint], ["lock", "--now", fixture.mountpoint]] {
            let refused = try protfsctl(asNobody: true, arguments, fixture: fixture)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("not allowed: only the owner of \(fixture.mountpoint) (uid 0) and root may lock it"),
                    "\(refused.stderr)")
        }
        let unlock = try protfsctl(asNobody: true, ["unlock", fixture.mountpoint], fixture: fixture, stdin: "open sesame\n")
        #expect(unlock.status == 1)
        #expect(unlock.stderr.contains("not allowed"), "\(unlock.stderr)")
        let passwd = try protfsctl(asNobody: true, ["passwd", fixture.mountpoint], fixture: fixture, stdin: "open sesame\nnew\n")
        #expect(passwd.status == 1)
        #expect(passwd.stderr.contains("not allowed"))
        #expect(fixture.handler.record.withLock { ($0.locks, $0.passcode) } == ([], FakeHandler.passcode))
    }

    @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
    func theMountingUserAndRootMayChange() throws {
        let fixture = try ServerFixture(mountingUser: Self.nobody)
        let asOwner = try protfsctl(asNobody: true, ["lock", "--now", fixture.mountpoint], fixture: fixture)
        #expect(asOwner.status == 0, "\(asOwner.stderr)")
        let asRoot = try protfsctl(asNobody: false, ["unlock", fixture.mountpoint], fixture: fixture, stdin: "open sesame\n")
        #expect(asRoot.status == 0, "\(asRoot.stderr)")
        let wrong = try protfsctl(asNobody: true, ["unlock", fixture.mountpoint], fixture: fixture, stdin: "guess\n")
        #expect(wrong.status == 3)
        #expect(wrong.stderr.contains("wrong passcode"))
        #expect(fixture.handler.record.withLock { $0.locks } == [.now])
    }

    @Test(.enabled(if: geteuid() == 0, "switching users needs root"))
    func theBackingDirectoryAndPidAreForTheOwnerAndRoot() throws {
        let fixture = try ServerFixture(mountingUser: 0)
        let json = try protfsctl(asNobody: true, ["status", fixture.mountpoint, "--json"], fixture: fixture)
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["backing"] is NSNull && object["pid"] is NSNull, "\(json.stdout)")
        #expect(object["owner"] as? Int == 0 && object["state"] as? String == "unlocked", "\(json.stdout)")
        let text = try protfsctl(asNobody: true, ["status", fixture.mountpoint], fixture: fixture)
        #expect(text.stdout.contains("owner:") && text.stdout.contains("root (uid 0)"), "\(text.stdout)")
        #expect(!text.stdout.contains("/srv/backing") && !text.stdout.contains("4242"), "\(text.stdout)")
        #expect(!text.stdout.contains("backing directory:") && !text.stdout.contains("daemon pid:"), "\(text.stdout)")

        let owned = try ServerFixture(mountingUser: Self.nobody)
        for asNobody in [true, false] {
            let shown = try protfsctl(asNobody: asNobody, ["status", owned.mountpoint, "--json"], fixture: owned)
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            #expect(fields["backing"] as? String == "/srv/backing" && fields["pid"] as? Int == 4242, "\(shown.stdout)")
            #expect(fields["owner"] as? Int == Int(Self.nobody), "\(shown.stdout)")
        }
    }

    @Test func protfsctlAgainstTheFakeDaemon() throws {
        let fixture = try ServerFixture()
        let human = try protfsctl(asNobody: false, ["status", fixture.mountpoint], fixture: fixture)
        #expect(human.status == 0)
        #expect(human.stdout.contains("state:") && human.stdout.contains("unlocked"), "\(human.stdout)")
        #expect(human.stdout.contains("backing directory:") && human.stdout.contains("/srv/backing"))
        let passwd = try protfsctl(asNobody: false, ["passwd", fixture.mountpoint], fixture: fixture, stdin: "open sesame\nnext one\n")
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(fixture.handler.record.withLock { $0.passcode } == Array("next one".utf8))
        let usage = try protfsctl(asNobody: false, ["lock", "--soon", fixture.mountpoint], fixture: fixture)
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("unknown option '--soon'"))
        let missing = try protfsctl(asNobody: false, ["status", fixture.mountpoint + "-other"], fixture: fixture)
        #expect(missing.status == 6)
        #expect(missing.stderr.contains("no protfs daemon serves"))
    }
}
