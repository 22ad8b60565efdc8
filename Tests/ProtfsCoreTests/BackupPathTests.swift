import Testing
@testable import ProtfsCore
import ProtfsFormat

/// The paths of an archive's entries (docs/BACKUP.md): a restore creates only what stays
/// inside the new backing directory, and knows which files carry a vault header.
@Suite struct BackupPathTests {
    static func bytes(_ path: String) -> [UInt8] { Array(path.utf8) }

    @Test(arguments: ["a", "a/b", "a/b/c", "...", "a/..b/c.", ".a/b", "protfs.items/x"])
    func pathsInside(_ path: String) {
        #expect(BackupStreamReader.staysInside(Self.bytes(path)))
    }

    @Test(arguments: ["/a", "a/", "a//b", ".", "..", "a/.", "a/..", "../a", "a/../b", "./a", "a/\0b", "\0"])
    func pathsOutsideOrMalformed(_ path: String) {
        #expect(!BackupStreamReader.staysInside(Self.bytes(path)))
    }

    @Test func whichFilesHaveHeaders() {
        #expect(ArchiveReplay.hasHeader("f"))
        #expect(ArchiveReplay.hasHeader("d/e/f"))
        #expect(!ArchiveReplay.hasHeader(""))
        #expect(!ArchiveReplay.hasHeader("\(ReservedNames.items)/record"))
        #expect(!ArchiveReplay.hasHeader("\(ReservedNames.links)/record"))
        #expect(!ArchiveReplay.hasHeader("d/protfs.dir"))
    }
}
