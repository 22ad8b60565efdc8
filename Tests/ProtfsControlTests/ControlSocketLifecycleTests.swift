import Foundation
import Glibc
import Testing
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import ProtfsSystem

/// Where the socket lives, its modes, and what happens to sockets left behind.
@Suite struct ControlSocketLifecycleTests {
    @Test func socketNameIsTheHashOfTheCanonicalMountPoint() {
        // SHA-256("abc") = ba7816bf 8f01cfea 414140de ...
        #expect(ControlSocketPath.fileName(forMountpoint: "abc") == "ba7816bf8f01cfea.sock")
        let tmp = CanonicalPath.resolved("/tmp")!
        #expect(ControlSocketPath.canonicalMountpoint("/tmp/../tmp/./") == tmp)
        #expect(ControlSocketPath.canonicalMountpoint("/tmp//gone-\(getpid())/x/../y") == tmp + "/gone-\(getpid())/y")
        #expect(ControlSocketPath.canonicalMountpoint("/tmp/missing-\(getpid())") == tmp + "/missing-\(getpid())")
        #expect(ControlSocketPath.serverDirectory(euid: 0) == "/run/protfs")
        #expect(ControlSocketPath.clientDirectories().first == ControlSocketDirectory("/run/protfs", trusting: [0], checkingDirectories: false) && ControlSocketPath.rootAsSeen() == 0)
    }

    @Test func modesOfTheDirectoryAndTheSocket() throws {
        let fixture = try ServerFixture()
        var st = stat()
        #expect(lstat(fixture.directory, &st) == 0)
        #expect(st.st_mode & 0o7777 == 0o755)
        #expect(lstat(fixture.server.socketPath, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o7777 == 0o666)
        #expect(fixture.server.socketPath == fixture.directory + "/" + ControlSocketPath.fileName(forMountpoint: fixture.mountpoint))
    }

    @Test func aStaleSocketIsReplaced() throws {
        let fixture = try ServerFixture(start: false)
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        // A socket bound and closed without unlinking: what a killed daemon leaves.
        _ = try UnixSocket.listening(at: fixture.server.socketPath, backlog: 1)
        #expect(throws: ControlFailure.self) { try fixture.client().send(.status) }
        try fixture.server.start()
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    @Test func aLiveDaemonIsNotDisplaced() throws {
        let fixture = try ServerFixture()
        let second = try ControlServer(handler: FakeHandler(), mountpoint: fixture.mountpoint, mountingUser: getuid(),
                                       directory: fixture.directory)
        #expect(throws: ControlServerError.alreadyServed(path: fixture.server.socketPath)) { try second.start() }
        #expect(try fixture.client().send(.status) == .status(fixture.handler.status()))
    }

    @Test func somethingElseAtThePathIsNotRemoved() throws {
        let fixture = try ServerFixture(start: false)
        try FileManager.default.createDirectory(atPath: fixture.directory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: fixture.server.socketPath, contents: Data("keep".utf8)))
        #expect(throws: ControlServerError.occupied(path: fixture.server.socketPath)) { try fixture.server.start() }
        #expect(FileManager.default.contents(atPath: fixture.server.socketPath) == Data("keep".utf8))
    }

    @Test func stopRemovesTheSocket() throws {
        let fixture = try ServerFixture()
        fixture.server.stop()
        #expect(access(fixture.server.socketPath, F_OK) != 0)
        do {
            _ = try fixture.client()
            Issue.record("a client found a stopped server")
        } catch {
            #expect(error.exitCode == .notFound)
        }
        fixture.server.stop()  // twice is harmless
    }

    @Test func aPathTooLongForASocketIsRefused() {
        let deep = "/tmp/" + String(repeating: "d", count: 120)
        #expect(throws: ControlServerError.self) {
            try ControlServer(handler: FakeHandler(), mountpoint: "/m", mountingUser: 0, directory: deep)
        }
    }
}
