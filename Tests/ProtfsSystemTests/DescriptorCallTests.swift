import Glibc
import ProtfsSystem
import Testing

/// The descriptor wrappers on real files, pipes and socket pairs: what the kernel refuses
/// arrives as its `Errno`, and an owner closes its descriptor exactly when it goes.
@Suite("descriptor calls on real files")
struct DescriptorCallTests {
    @Test("the kernel's refusals arrive as their errno")
    func refusalsAreTheirErrno() throws {
        let scratch = try ScratchDirectory()
        let dir = scratch.fd
        #expect(throws: Errno.noEntry) { _ = try OwnedDescriptor.open("absent", in: dir, .readOnly) }
        try dir.makeDirectory("d", mode: 0o700)
        #expect(throws: Errno.exists) { try dir.makeDirectory("d", mode: 0o700) }
        try OwnedDescriptor.open("d/f", in: dir, [.writeOnly, .create]).closeAfter { _ in }
        #expect(throws: Errno.notEmpty) { try dir.removeDirectory("d") }
        #expect(throws: Errno.isDirectory) { try dir.removeFile("d") }
        try OwnedDescriptor.open("f", in: dir, [.writeOnly, .create]).closeAfter { _ in }
        #expect(throws: Errno.exists) { try dir.rename("f", to: dir, "d", flags: .noReplace) }
        #expect(throws: Errno.exists) { _ = try OwnedDescriptor.open("f", in: dir, [.writeOnly, .create, .exclusive]) }
        // Never through a final symlink.
        try dir.makeSymlink("link", target: "f")
        #expect(throws: Errno.loop) { _ = try OwnedDescriptor.open("link", in: dir, .readOnly) }
        #expect(try dir.readSymlink("link") == "f")
        #expect(try dir.status(of: "link").isSymlink)
        #expect(throws: Errno.io) { _ = try OwnedDescriptor.openRegularFile("d", in: dir) }
        #expect(throws: Errno.io) { _ = try OwnedDescriptor.openRegularFile("link", in: dir) }
    }

    @Test("positional reads and writes move every byte, and refuse a pipe and a socket")
    func positionalInputOutput() throws {
        let scratch = try ScratchDirectory()
        let file = try OwnedDescriptor.open("data", in: scratch.fd, [.readWrite, .create])
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try file.borrowed.writeAll(bytes)
        #expect(try file.borrowed.readAll() == bytes)
        var tail = [UInt8](repeating: 0, count: 10)
        #expect(try tail.withUnsafeMutableBytes { try file.borrowed.read(into: $0, at: Int64(bytes.count - 4)) } == 4)
        #expect(Array(tail[0..<4]) == Array(bytes.suffix(4)))
        try file.borrowed.truncate(to: 3)
        #expect(try file.borrowed.status().st_size == 3)

        let ends = try pipeEnds()
        let readEnd = OwnedDescriptor(adopting: ends.read), writeEnd = OwnedDescriptor(adopting: ends.write)
        #expect(throws: Errno(ESPIPE)) { try writeEnd.borrowed.writeAll([1]) }
        #expect(throws: Errno(ESPIPE)) { _ = try readEnd.borrowed.readAll() }
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let one = OwnedDescriptor(adopting: FileDescriptor(rawValue: pair[0]))
        let other = OwnedDescriptor(adopting: FileDescriptor(rawValue: pair[1]))
        #expect(throws: Errno(ESPIPE)) { try one.borrowed.writeAll([1]) }
        #expect(throws: Errno(ESPIPE)) { _ = try other.borrowed.readAll() }
    }

    @Test("an owner closes its descriptor when it goes, after closeAfter, and never after release")
    func ownersClose() throws {
        let scratch = try ScratchDirectory()
        var raw: Int32 = -1
        var identity: FileIdentity?
        do {
            let owner = try OwnedDescriptor.open("f", in: scratch.fd, [.writeOnly, .create])
            raw = owner.borrowed.rawValue
            identity = FileIdentity(raw)
            #expect(fcntl(raw, F_GETFD) & FD_CLOEXEC != 0, "opened without close-on-exec")
        }
        #expect(identity != nil && FileIdentity(raw) != identity, "the owner left its descriptor open")

        var seen: (Int32, FileIdentity?) = (-1, nil)
        #expect(throws: Errno.io) {
            try OwnedDescriptor.open("f", in: scratch.fd, .readOnly).closeAfter { (fd) throws(Errno) in
                seen = (fd.rawValue, FileIdentity(fd.rawValue))
                throw .io
            }
        }
        #expect(seen.1 != nil && FileIdentity(seen.0) != seen.1, "closeAfter left the descriptor open when its body threw")

        let released = try OwnedDescriptor.open("f", in: scratch.fd, .readOnly).release()
        #expect(FileIdentity(released.rawValue) != nil, "release closed the descriptor it handed over")
        close(released.rawValue)

        let original = try OwnedDescriptor.open("f", in: scratch.fd, .readOnly)
        let copy = try original.borrowed.duplicate()
        #expect(copy.borrowed != original.borrowed && FileIdentity(copy.borrowed.rawValue) == FileIdentity(original.borrowed.rawValue))
        #expect(fcntl(copy.borrowed.rawValue, F_GETFD) & FD_CLOEXEC != 0, "a duplicate without close-on-exec")
    }

    @Test("a pipe's end closed by its owner ends the stream for the other end")
    func pipeEndsWhenItsOwnerGoes() throws {
        let ends = try pipeEnds()
        let readEnd = OwnedDescriptor(adopting: ends.read), writeEnd = OwnedDescriptor(adopting: ends.write)
        var byte: UInt8 = 5
        #expect(write(writeEnd.borrowed.rawValue, &byte, 1) == 1)
        _ = consume writeEnd
        var got: [UInt8] = [0, 0]
        #expect(read(readEnd.borrowed.rawValue, &got, 2) == 1 && got[0] == 5)
        #expect(read(readEnd.borrowed.rawValue, &got, 2) == 0, "the write end is still open")
    }
}
