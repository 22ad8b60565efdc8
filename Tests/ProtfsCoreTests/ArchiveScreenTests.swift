import Glibc
import ProtfsSystem
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat

/// What a restore makes of an archive's entries (docs/BACKUP.md, "What a restore trusts"):
/// where each path is, which entries are left out, what is changed, and that each is reported.
@Suite struct ArchiveScreenTests {
    static let hash = String(repeating: "A", count: 43)
    static let restorer: (uid: UInt32, gid: UInt32) = (4242, 4343)

    final class Findings {
        var all: [ArchiveFinding] = []
    }

    static func screen(vaultID: ObjectID = .random(), keys: FilesystemKeys = FilesystemKeys(filesystemKey: .random()),
                       _ findings: Findings) -> ArchiveScreen {
        ArchiveScreen(restorer: restorer, vaultID: vaultID, keys: keys) { findings.all.append($0) }
    }

    static func attributes(_ mode: UInt32, uid: UInt32 = 1000) -> BackupAttributes {
        var st = stat()
        st.st_mode = mode_t(mode)
        st.st_uid = uid
        st.st_gid = uid
        return BackupAttributes(st)
    }

    @Test("paths", arguments: [
        ("", ArchiveScreen.Place.root),
        ("abc", .vault),
        ("abc/def", .vault),
        ("stray name", .vault),
        ("protfs.items", .folder),
        ("protfs.links", .folder),
        ("protfs.items/x", .inFolder(folder: "protfs.items", name: "x")),
        ("protfs.items/x/y", .foreign),
        ("abc/protfs.dir", .daemonFile),
        ("protfs.dir", .daemonFile),
        ("protfs.keybag", .foreign),
        ("protfs.lost+found/abc", .foreign),
        ("abc/protfs.tmp.1/def", .foreign),
        ("abc/protfs.items", .foreign),
        ("abc/protfs.long.\(hash)", .vault),
        ("protfs.long.\(hash)/abc", .vault),
        ("abc/protfs.long.\(hash).name", .daemonFile),
        ("protfs.long.\(hash).name/abc", .foreign),
    ])
    func place(path: String, place: ArchiveScreen.Place) {
        #expect(ArchiveScreen.place(of: path) == place)
    }

    @Test func setIDBitsAreClearedAndCounted() {
        let findings = Findings()
        var screen = Self.screen(findings)
        #expect(screen.directory("", Self.attributes(UInt32(S_IFDIR) | 0o700, uid: Self.restorer.uid)) != nil)
        #expect(screen.file("tool", Self.attributes(UInt32(S_IFREG) | 0o4755), size: 10)
                == .make(Self.attributes(UInt32(S_IFREG) | 0o755)))
        #expect(screen.directory("shared", Self.attributes(UInt32(S_IFDIR) | 0o3775))?.mode == UInt32(S_IFDIR) | 0o1775)
        #expect(screen.node("pipe", Self.attributes(UInt32(S_IFIFO) | 0o2644), device: 0)?.mode == UInt32(S_IFIFO) | 0o644)
        #expect(screen.file("plain", Self.attributes(UInt32(S_IFREG) | 0o1777), size: 0)
                == .make(Self.attributes(UInt32(S_IFREG) | 0o1777)))
        #expect(screen.setIDBitsCleared == 3)
        #expect(findings.all.map(\.path) == ["tool", "shared", "pipe"])
        #expect(findings.all.allSatisfy { !$0.isLeftOut })
    }

    @Test func devicesAreLeftOutWhereverTheyAre() {
        let findings = Findings()
        var screen = Self.screen(findings)
        #expect(screen.node("mem", Self.attributes(UInt32(S_IFCHR) | 0o666), device: 0x0101) == nil)
        #expect(screen.node("sda", Self.attributes(UInt32(S_IFBLK) | 0o600), device: 0x0800) == nil)
        #expect(screen.node("protfs.items/x", Self.attributes(UInt32(S_IFIFO) | 0o600), device: 0) == nil)
        #expect(findings.all.map(\.problem) == [.deviceNode(mode: UInt32(S_IFCHR) | 0o666, device: 0x0101),
                                                 .deviceNode(mode: UInt32(S_IFBLK) | 0o600, device: 0x0800), .notARecord])
        #expect(findings.all[0].description == "mem: a character device node (1:1): a restore leaves it out")
    }

    @Test func theRootAndTheDaemonsRecordsGoToTheRestorer() {
        let findings = Findings()
        var screen = Self.screen(findings)
        let root = screen.directory("", Self.attributes(UInt32(S_IFDIR) | 0o755, uid: 1000))
        #expect(root?.uid == Self.restorer.uid && root?.gid == Self.restorer.gid)
        let folder = screen.directory("protfs.items", Self.attributes(UInt32(S_IFDIR) | 0o777, uid: 1000))
        #expect(folder?.mode == UInt32(S_IFDIR) | 0o700 && folder?.uid == Self.restorer.uid)
        guard case let .make(record) = screen.file("abc/protfs.dir", Self.attributes(UInt32(S_IFREG) | 0o4666, uid: 0), size: 64)
        else { Issue.record("protfs.dir left out"); return }
        #expect(record.mode == UInt32(S_IFREG) | 0o600 && record.uid == Self.restorer.uid)
        #expect(screen.setIDBitsCleared == 0)
        #expect(findings.all.map(\.problem) == [.rootOwner(uid: 1000), .recordOwner(uid: 0)])
        // A vault entry keeps its owner.
        #expect(screen.file("abc", Self.attributes(UInt32(S_IFREG) | 0o644, uid: 77), size: 0)
                == .make(Self.attributes(UInt32(S_IFREG) | 0o644, uid: 77)))
    }

    @Test func theDaemonsFoldersTakeOnlyRecords() {
        let findings = Findings()
        var screen = Self.screen(findings)
        let file = Self.attributes(UInt32(S_IFREG) | 0o600)
        #expect(screen.file("protfs.items/bash", file, size: 10) == .leaveOut)
        #expect(screen.file("protfs.items/protfs.tmp.1", file, size: 10) == .leaveOut)
        #expect(screen.file("protfs.items/\(Self.hash)", file, size: UInt64(ItemRecord.maximumByteCount + 1)) == .leaveOut)
        guard case .record(_, "protfs.items", Self.hash) = screen.file("protfs.items/\(Self.hash)", file, size: 100) else {
            Issue.record("a record's name refused")
            return
        }
        #expect(screen.directory("protfs.items/sub", Self.attributes(UInt32(S_IFDIR) | 0o700)) == nil)
        #expect(screen.symlink("protfs.links/" + String(repeating: "a", count: 32), Self.attributes(UInt32(S_IFLNK) | 0o777)) == nil)
        #expect(screen.file("protfs.items", file, size: 0) == .leaveOut)
        #expect(screen.file("protfs.keybag", file, size: 0) == .leaveOut)
        #expect(screen.hardLink("protfs.items/\(Self.hash)", to: "abc") == false)
        #expect(screen.hardLink("abc", to: "protfs.items/\(Self.hash)") == false)
        #expect(screen.hardLink("abc", to: "def") == true)
        #expect(findings.all.map(\.problem) == [.notARecord, .notARecord, .recordMalformed, .notARecord, .notARecord,
                                                 .notARecord, .notARecord, .notARecord, .notARecord])
        #expect(findings.all.allSatisfy { $0.isLeftOut })
        #expect(screen.entriesLeftOut == 9)
    }

    /// A record is made only if fsck would open it: the known-answer items of
    /// `ItemRecordTests` open for their names in their vault; a changed byte, another name or
    /// another vault does not.
    @Test func recordsAreCheckedAsFsckOpensThem() throws {
        let known = try ItemRecordTests()
        let vaultID = try ObjectID(hex: known.vectors.vaultID)
        let findings = Findings()
        var screen = Self.screen(vaultID: vaultID, keys: known.keys, findings)
        var elsewhere = Self.screen(keys: known.keys, findings)
        let vector = try #require(known.vectors.items.first)
        let record = try #require(hexBytes(vector.record))
        let other = try #require(known.vectors.items.last).recordName
        let path = "protfs.items/" + vector.recordName
        #expect(screen.accepts(record, path: path, folder: ReservedNames.items, name: vector.recordName) == true)
        #expect(findings.all.isEmpty)
        var changed = record
        changed[changed.count / 2] ^= 1
        #expect(screen.accepts(changed, path: path, folder: ReservedNames.items, name: vector.recordName) == false)
        #expect(screen.accepts(record, path: path, folder: ReservedNames.items, name: other) == false)
        #expect(elsewhere.accepts(record, path: path, folder: ReservedNames.items, name: vector.recordName) == false)
        #expect(findings.all.map(\.problem) == [.recordMalformed, .recordMalformed, .recordMalformed])
        // A link blob: the size of a sealed target.
        #expect(screen.accepts([UInt8](repeating: 0, count: 41), path: "protfs.links/x", folder: ReservedNames.links, name: "x") == true)
        #expect(screen.accepts([UInt8](repeating: 0, count: 40), path: "protfs.links/x", folder: ReservedNames.links, name: "x") == false)
    }
}
