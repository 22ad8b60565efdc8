import Glibc
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsSystem

/// `rmdir` hands back the removed directory's record still open, so that ext4's freeing of
/// it (at its last close) can wait until the reply has gone.
@Suite struct DirectoryRemovalTests {
    typealias Fixture = LockControllerTests.Fixture

    @Test("a removed directory's record comes back unlinked and still open")
    func recordHandedBack() throws {
        let f = try Fixture()
        let name = Array("d".utf8)
        _ = try f.fileSystem.makeDirectory(name, in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        let record = try #require(try f.fileSystem.removeDirectory(name, in: f.fileSystem.root))
        #expect(record.isRegularFile)
        #expect(try record.status().st_nlink == 0, "unlinked, freed only when let go")
        #expect(throws: Errno.noEntry) { try f.fileSystem.lookup(name, in: f.fileSystem.root) }
    }

    @Test("a directory that is not empty keeps its record, and nothing comes back")
    func notEmptyKeepsRecord() throws {
        let f = try Fixture()
        let name = Array("d".utf8)
        let directory = try f.fileSystem.makeDirectory(name, in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        _ = try f.fileSystem.makeDirectory(Array("inner".utf8), in: directory, mode: 0o700, caller: f.caller)
        #expect(throws: Errno.notEmpty) { try f.fileSystem.removeDirectory(name, in: f.fileSystem.root) }
        let again = try f.fileSystem.lookup(name, in: f.fileSystem.root)
        #expect(try DirectoryMetadata.read(in: again.descriptor, vaultID: f.vault.keyring.vaultID,
                                           keys: f.vault.filesystemKeys).directoryID
                == f.fileSystem.directoryMetadata(of: directory).directoryID)
    }
}
