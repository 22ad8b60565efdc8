import Foundation
import Glibc
import ProtfsDomain
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport

/// fsck on vaults built through the core API, then damaged on the backing store.
@Suite struct VaultCheckerTests {
    typealias Problem = VaultFinding.Problem

    /// A vault with a small tree of every kind of object, made through the vault filesystem
    /// as a mount would make it.
    final class Fixture {
        let directory = TemporaryDirectory()
        var backing: String { directory.child("backing") }
        var deviceKey: String { directory.child("device.key") }
        static let longName = String(repeating: "n", count: 200)
        static let longTarget = String(repeating: "t/", count: 1500)
        static let notesSize = 10000  // three chunks, the last one partial
        static let longNote = Array(("remembered " + String(repeating: "n", count: 2000)).utf8)

        init() throws {
            _ = try Vault.initialize(backing: backing, protectionClass: .completeUntilFirstUserAuthentication,
                                     deviceKeyPath: deviceKey, passcode: { passcode("right") }, kdf: .interactive)
            try populate { fs, caller in
                let root = fs.root
                try Self.write(fs, "notes", in: root, size: Self.notesSize, caller: caller)
                let notes = try fs.lookup(Array("notes".utf8), in: root)
                // One attribute packed with the others, one too long to be, in its own xattr.
                try fs.setExtendedAttribute(Array("user.tag".utf8), Array("t".utf8), flags: 0, of: notes, caller: caller)
                try fs.setExtendedAttribute(Array("user.note".utf8), Self.longNote, flags: 0, of: notes, caller: caller)
                try fs.reclass(try Self.write(fs, "secret", in: root, size: 100, caller: caller), to: .complete)
                try fs.reclass(try Self.write(fs, "open", in: root, size: 5000, caller: caller), to: .none)
                try fs.reclass(try Self.write(fs, "b-file", in: root, size: 50, caller: caller), to: .completeUnlessOpen)
                try Self.write(fs, Self.longName, in: root, size: 10, caller: caller)
                _ = try fs.makeSymlink(Array("link".utf8), in: root, target: Array("notes".utf8), caller: caller)
                _ = try fs.makeSymlink(Array("longlink".utf8), in: root, target: Array(Self.longTarget.utf8), caller: caller)
                _ = try fs.makeNode(Array("pipe".utf8), in: root, mode: S_IFIFO | 0o644, device: 0, caller: caller)
                let d = try fs.makeDirectory(Array("d".utf8), in: root, mode: 0o755, caller: caller)
                try Self.write(fs, "inner", in: d, size: 5000, caller: caller)
                try fs.link(try fs.lookup(Array("open".utf8), in: root), as: Array("hard".utf8), in: d)
                let e = try fs.makeDirectory(Array("e".utf8), in: d, mode: 0o755, caller: caller)
                try Self.write(fs, "deep", in: e, size: 1, caller: caller)
            }
        }

        /// 8 files (one of them under two names), 3 directories, 2 symlinks, 1 FIFO.
        static let objectCount = 14
        /// Files of a class other than `none`: what a check without the passcode skips.
        static let protectedFiles = 6

        /// Runs `body` on the unlocked vault filesystem, then lets the vault (and its lock) go.
        func populate(_ body: (VaultFileSystem, Caller) throws -> Void) throws {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKey)
            try vault.unlock(passcode: passcode("right"))
            let controller = LockController(vault: vault, initialState: .unlocked, grace: .zero, autolock: .zero)
            try body(try VaultFileSystem(vault: vault, controller: controller), Caller(uid: getuid(), gid: getgid(), pid: getpid()))
        }

        @discardableResult
        static func write(_ fs: VaultFileSystem, _ name: String, in parent: BackingNode, size: Int, caller: Caller) throws -> BackingNode {
            let (node, handle, _) = try fs.createFile(Array(name.utf8), in: parent, mode: 0o644, caller: caller)
            defer { fs.release(handle) }
            let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            try data.withUnsafeBytes { bytes in Result { () throws(Errno) in try fs.write(handle, bytes, at: 0) } }.get()
            return node
        }

        func check(unlocked: Bool = true, repair: Bool = false) throws -> VaultCheckReport {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKey)
            if unlocked { try vault.unlock(passcode: passcode("right")) }
            return VaultChecker(vault: vault, repair: repair).run()
        }

        /// The backing path (relative to the backing directory) of a mount path.
        func backingPath(_ path: String) throws -> String {
            let vault = try Vault.open(backing: backing, deviceKeyPath: deviceKey)
            let fs = try VaultFileSystem(vault: vault, controller: LockController(vault: vault, initialState: .beforeFirstUnlock,
                                                                                  grace: .zero, autolock: .zero))
            return try fs.backingRelativePath(of: path.split(separator: "/").map { Array($0.utf8) })
        }

        func full(_ relative: String) -> String { backing + "/" + relative }

        func flipByte(_ relative: String, at offset: Int64) throws {
            let fd = try FileDescriptor.open(path: full(relative), [.readWrite])
            defer { fd.close() }
            var byte: [UInt8] = [0]
            _ = try byte.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: offset) } }.get()
            byte[0] ^= 0x01
            try byte.withUnsafeBytes { b in Result { () throws(Errno) in try fd.write(b, at: offset) } }.get()
        }

        func truncate(_ relative: String, to size: Int64) throws {
            let fd = try FileDescriptor.open(path: full(relative), [.writeOnly])
            defer { fd.close() }
            try fd.truncate(to: size)
        }

        /// Renames a backing entry to a name that is still base64url but no longer decodes
        /// (its first character changed); returns the new relative path.
        func damageName(_ relative: String) throws -> String {
            var components = relative.split(separator: "/").map(String.init)
            let last = components.removeLast()
            let damaged = (last.hasPrefix("A") ? "B" : "A") + last.dropFirst()
            let newRelative = (components + [damaged]).joined(separator: "/")
            guard Glibc.rename(full(relative), full(newRelative)) == 0 else { throw Errno.current }
            return newRelative
        }

        func remove(_ relative: String) throws {
            guard unlink(full(relative)) == 0 else { throw Errno.current }
        }

        /// Every backing object below the root (lost+found aside) with its type, bytes or
        /// target, and xattrs: what "never touches healthy objects" compares.
        func snapshot(excluding excluded: Set<String> = []) throws -> [String: String] {
            var result: [String: String] = [:]
            func visit(_ relative: String) throws {
                let fd = try FileDescriptor.open(path: full(relative), [.readOnly, .directory])
                defer { fd.close() }
                for name in try fd.entryNames() where name != ReservedNames.lostAndFound {
                    let child = relative == "." ? name : relative + "/" + name
                    guard !excluded.contains(child) else { continue }
                    let status = try fd.status(of: name)
                    var text = "mode \(status.st_mode) links \(status.st_nlink)"
                    if status.isSymlink {
                        text += " -> " + (try fd.readSymlink(name))
                    } else if !status.isDirectory && status.isRegularFile {
                        let file = try FileDescriptor.open(name, in: fd, [.readOnly])
                        defer { file.close() }
                        text += " " + hex(try file.readAll(limit: 1 << 24))
                        for attribute in try file.extendedAttributeNames().sorted() {
                            text += " \(attribute)=" + hex(try file.extendedAttribute(attribute))
                        }
                    }
                    result[child] = text
                    if status.isDirectory { try visit(child) }
                }
            }
            try visit(".")
            return result
        }

        func lostAndFoundNames() -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: full(ReservedNames.lostAndFound))) ?? [])
        }

        func index() -> String {
            (try? String(contentsOfFile: full(ReservedNames.lostAndFound + "/" + LostAndFound.indexName), encoding: .utf8)) ?? ""
        }
    }

    /// Findings by the location they print, for comparisons that do not depend on walk order.
    func problems(_ report: VaultCheckReport) -> [String: Problem] {
        Dictionary(report.findings.map { ($0.location.description, $0.problem) }, uniquingKeysWith: { first, _ in first })
    }

    /// A backing offset inside the ciphertext of chunk `index`.
    func sealedByte(ofChunk index: Int64) -> Int64 { ContentLayout.backingOffset(ofChunk: index) + 30 }

    // MARK: clean vaults

    @Test func cleanVaultIsCleanAndUntouched() throws {
        let f = try Fixture()
        let before = try f.snapshot()
        let report = try f.check()
        #expect(report.findings.isEmpty)
        #expect(report.exitCode == .success)
        #expect(report.objectsChecked == Fixture.objectCount)
        #expect((report.files, report.directories, report.symlinks, report.otherNodes) == (8, 3, 2, 1))
        #expect(report.classesWithoutKeys.isEmpty && report.filesNotChecked == 0)
        #expect(report.summary == "checked 14 objects (8 files, 3 directories, 2 symlinks, 1 other node); 0 damaged; 0 repaired")
        let repaired = try f.check(repair: true)
        #expect(repaired.findings.isEmpty && repaired.exitCode == .success)
        #expect(try f.snapshot() == before, "a clean vault is not written to, even under --repair")
        #expect(!FileManager.default.fileExists(atPath: f.full(ReservedNames.lostAndFound)))
    }

    @Test func withoutThePasscodeOnlyWhatNeedsNoneIsChecked() throws {
        let f = try Fixture()
        try f.flipByte(try f.backingPath("notes"), at: sealedByte(ofChunk: 0))
        let report = try f.check(unlocked: false)
        #expect(report.findings.isEmpty, "a completeUntilFirstUserAuthentication chunk needs the passcode")
        #expect(report.exitCode == .success)
        #expect(report.classesWithoutKeys == [.complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication])
        #expect(report.filesNotChecked == Fixture.protectedFiles)
        #expect(report.summary.hasSuffix("not checked without the passcode: contents of classes complete, completeUnlessOpen, "
                                         + "completeUntilFirstUserAuthentication (6 files)"))

        let open = try f.backingPath("open")
        try f.flipByte(open, at: sealedByte(ofChunk: 1))
        let withoutPasscode = try f.check(unlocked: false)
        #expect(problems(withoutPasscode) == ["/open": .chunksDamaged([1], chunkCount: 2), "/d/hard": .chunksDamaged([1], chunkCount: 2)])
        #expect(withoutPasscode.exitCode == .damage)
        let withPasscode = try f.check()
        #expect(problems(withPasscode) == ["/open": .chunksDamaged([1], chunkCount: 2), "/d/hard": .chunksDamaged([1], chunkCount: 2),
                                           "/notes": .chunksDamaged([0], chunkCount: 3)])
    }

    // MARK: contents

    @Test func tamperedChunkIsNamedMovedAndTheSecondRunIsClean() throws {
        let f = try Fixture()
        let notes = try f.backingPath("notes")
        try f.flipByte(notes, at: sealedByte(ofChunk: 1))
        let healthy = try f.snapshot(excluding: [notes])

        let report = try f.check()
        #expect(report.findings == [VaultFinding(location: .mount(path: Array("/notes".utf8), backingPath: notes),
                                                 problem: .chunksDamaged([1], chunkCount: 3))])
        #expect(report.findings.first?.line
                == "damaged: /notes: chunk 1 of 3 (plaintext bytes from 4096) fails authentication; --repair moves it to protfs.lost+found")
        #expect(report.exitCode == .damage)

        let repaired = try f.check(repair: true)
        #expect(repaired.findings.map(\.outcome) == [.moved(to: notes)])
        #expect(repaired.exitCode == .success, "everything found was repaired")
        #expect(repaired.findings.first?.line.hasSuffix("; moved to protfs.lost+found/\(notes)") == true)
        #expect(f.lostAndFoundNames() == [notes, LostAndFound.indexName])
        let index = f.index()
        #expect(index.contains("\t\(notes)\t\(notes)\tchunk 1 of 3"))
        #expect(!index.contains("notes"), "the index names no plaintext")

        let again = try f.check()
        #expect(again.findings.isEmpty && again.exitCode == .success)
        #expect(again.files == 7)
        #expect(try f.snapshot() == healthy, "only the damaged file moved")
    }

    @Test func headerDamageSizesAndCutsAreEachReported() throws {
        let f = try Fixture()
        let secret = try f.backingPath("secret"), open = try f.backingPath("open")
        let inner = try f.backingPath("d/inner"), notes = try f.backingPath("notes")
        let deep = try f.backingPath("d/e/deep")
        try f.flipByte(secret, at: 100)                                   // both slots (a re-class
        try f.flipByte(secret, at: 252)                                   // made slot 1 the active one)
        try f.truncate(open, to: 200)                                     // shorter than a header
        try f.truncate(inner, to: ContentLayout.backingOffset(ofChunk: 1) + 20)   // a 20-byte stump
        try f.truncate(notes, to: ContentLayout.backingOffset(ofChunk: 2))        // cut at a chunk boundary
        try f.flipByte(deep, at: 0)                                       // magic
        let report = try f.check()
        #expect(problems(report) == [
            "/secret": .header(.noValidSlot), "/open": .header(.truncated), "/d/hard": .header(.truncated),
            "/d/inner": .backingSizeMalformed(ContentLayout.backingOffset(ofChunk: 1) + 20),
            "/notes": .chunksDamaged([1], chunkCount: 2), "/d/e/deep": .header(.malformed),
        ])
        #expect(report.findings.allSatisfy { $0.problem.remedy == .moveToLostAndFound })
        let repaired = try f.check(repair: true)
        #expect(repaired.findings.count == 6 && repaired.findings.allSatisfy { $0.outcome.isRepaired })
        let again = try f.check()
        #expect(again.findings.isEmpty && again.exitCode == .success)
        #expect(f.lostAndFoundNames().count == 7, "six entries (the hard link under its own name) and the index")
    }

    // MARK: class hints

    @Test func classHintsAreCheckedAgainstTheTruthAndRewritten() throws {
        let f = try Fixture()
        let notes = try f.backingPath("notes"), open = try f.backingPath("open")
        // A hint copied from another file; a forged hint naming the wrong class on a file and
        // on a directory; a missing hint.
        try setxattrOrThrow(f.full(notes), ClassHint.attributeName, try getxattrOrThrow(f.full(open), ClassHint.attributeName))
        try f.populate { fs, _ in
            let secretNode = try fs.lookup(Array("secret".utf8), in: fs.root)
            try ClassHint.write(.none, to: secretNode.descriptor, objectID: try fs.header(of: secretNode).fileID, keys: fs.vault.filesystemKeys)
            let d = try fs.lookup(Array("d".utf8), in: fs.root)
            try ClassHint.write(.complete, to: d.descriptor, objectID: try fs.directoryMetadata(of: d).directoryID, keys: fs.vault.filesystemKeys)
        }
        let openFile = try FileDescriptor.open(path: f.full(open), [.readOnly])
        defer { openFile.close() }
        try openFile.removeExtendedAttribute(ClassHint.attributeName)

        let report = try f.check()
        #expect(problems(report) == [
            "/notes": .classHintDamaged(actual: .completeUntilFirstUserAuthentication),
            "/secret": .classHintWrong(hint: .none, actual: .complete),
            "/d": .classHintWrong(hint: .complete, actual: .completeUntilFirstUserAuthentication),
        ])
        #expect(report.classHintsAdded == 1, "the missing hint is put back quietly")
        #expect(report.exitCode == .damage)
        #expect(report.findings.contains { $0.line == "damaged: /secret: class hint says none, but the object's class is complete; --repair rewrites the hint" })

        let repaired = try f.check(repair: true)
        #expect(repaired.findings.allSatisfy { $0.outcome == .rewroteClassHint } && repaired.exitCode == .success)
        #expect(f.lostAndFoundNames().isEmpty)
        let again = try f.check()
        #expect(again.findings.isEmpty && again.classHintsAdded == 0)
        try f.populate { fs, _ in
            for (name, expected) in [("notes", ProtectionClass.completeUntilFirstUserAuthentication), ("secret", .complete), ("open", .none)] {
                let node = try fs.lookup(Array(name.utf8), in: fs.root)
                #expect(try ClassHint.read(from: node.descriptor, objectID: try fs.header(of: node).fileID, keys: fs.vault.filesystemKeys) == expected)
            }
        }
    }

    // MARK: names

    @Test func namesSidecarsTemporariesAndForeignEntries() throws {
        let f = try Fixture()
        try f.populate { fs, caller in
            try Fixture.write(fs, Fixture.longName + "2", in: try fs.lookup(Array("d".utf8), in: fs.root), size: 3, caller: caller)
        }
        let inner = try f.backingPath("d/inner")
        let d = try f.backingPath("d")
        let long = try f.backingPath(Fixture.longName)
        let long2 = try f.backingPath("d/" + Fixture.longName + "2")
        // A name damaged in place (still base64url), a long entry whose sidecar is gone, a
        // sidecar whose entry is gone, a temporary in two directories, and a stranger.
        let damagedName = try f.damageName(inner)
        try f.remove(long2 + ReservedNames.sidecarSuffix)
        try f.remove(long)
        try f.directory.write([1, 2, 3], to: "backing/protfs.tmp.0123")
        try f.directory.write([1, 2, 3], to: "backing/\(d)/protfs.tmp.4567")
        try f.directory.write(Array("hello".utf8), to: "backing/notes.txt")
        let notUTF8 = (Array(f.full("f").utf8) + [0xFF, 0]).map { CChar(bitPattern: $0) }
        let planted = open(notUTF8, O_CREAT | O_WRONLY, 0o600)
        guard planted >= 0 else { throw Errno.current }
        close(planted)

        let report = try f.check()
        #expect(problems(report) == [
            "/d/[backing name \(damagedName.split(separator: "/").last!)]": .nameUndecodable,
            "/d/[backing name \(long2.split(separator: "/").last!)]": .longNameSidecarMissing,
            "/[backing name \(long).name]": .orphanSidecar,
            "/[backing name notes.txt]": .foreign,
            "/[backing name f\u{FFFD}]": .foreign,
        ])
        #expect(report.temporaryFilesRemoved == 2, "temporaries are cleaned up, not reported")
        #expect(!FileManager.default.fileExists(atPath: f.full("protfs.tmp.0123")))
        #expect(report.findings.contains { $0.line == "foreign: /[backing name notes.txt]: not made by protfs; the mount does not show it" })
        #expect(report.exitCode == .damage)

        let repaired = try f.check(repair: true)
        #expect(repaired.findings.filter { $0.problem.isDamage }.allSatisfy { $0.outcome.isRepaired })
        #expect(repaired.exitCode == .success, "a foreign entry is reported, never touched, and is not damage")
        #expect(!FileManager.default.fileExists(atPath: f.full(long + ReservedNames.sidecarSuffix)))
        let again = try f.check()
        #expect(again.findings.map(\.problem) == [.foreign, .foreign] && again.exitCode == .success)
        #expect(FileManager.default.fileExists(atPath: f.full("notes.txt")))
    }

    // MARK: symlinks

    @Test func symlinkTargetsAndOutOfLineBlobs() throws {
        let f = try Fixture()
        let link = try f.backingPath("link"), longlink = try f.backingPath("longlink")
        let blob = String(try FileDescriptor.currentWorkingDirectory.readSymlink(f.full(longlink)).dropFirst(3))  // "3.@<hex>"
        // The short link's target (and blob) replaced by another sealed-looking one; the long
        // link's name damaged, so it goes to lost+found with its blob still in protfs.links.
        try f.remove(ReservedNames.links + "/" + String(try FileDescriptor.currentWorkingDirectory.readSymlink(f.full(link)).dropFirst(3)))
        try f.remove(link)
        guard symlink(Base64URL.encode([UInt8](repeating: 7, count: 60)), f.full(link)) == 0 else { throw Errno.current }
        let damagedLong = try f.damageName(longlink)

        let report = try f.check(repair: true)
        #expect(problems(report) == ["/link": .symlinkTargetDamaged, "/[backing name \(damagedLong)]": .nameUndecodable])
        #expect(report.exitCode == .success)
        let again = try f.check()
        #expect(again.findings.isEmpty, "a blob whose symlink is in lost+found is no orphan")
        #expect(FileManager.default.fileExists(atPath: f.full(ReservedNames.links + "/" + blob)))

        // A blob whose symlink is gone is an orphan: moved, never deleted.
        try f.remove(ReservedNames.lostAndFound + "/" + damagedLong)
        let orphan = try f.check(repair: true)
        #expect(orphan.findings == [{
            var finding = VaultFinding(location: .daemonFile(backingPath: ReservedNames.links + "/" + blob), problem: .orphanLinkBlob)
            finding.outcome = .moved(to: blob)
            return finding
        }()])
        #expect(f.lostAndFoundNames().contains(blob))
        #expect(try f.check().findings.isEmpty)
    }

    /// Symlinks as builds before format 2 wrote them (their targets sealed to no location)
    /// are no damage: counted, and rewritten in format 3 by `--repair` with their owner and
    /// times, the old out-of-line target removed; a temporary symlink left by an interrupted
    /// rewrite is housekeeping.
    @Test func formatOneSymlinksAreCountedAndUpgraded() throws {
        let f = try Fixture()
        let link = try f.backingPath("link"), longlink = try f.backingPath("longlink")
        do {
            let vault = try Vault.open(backing: f.backing, deviceKeyPath: f.deviceKey)
            let root = try FileDescriptor.open(path: f.backing, [.readOnly, .directory])
            defer { root.close() }
            for (path, target) in [(link, "notes"), (longlink, Fixture.longTarget)] {
                SymlinkTarget.removeBlob(backingTarget: try root.readSymlink(path), root: root)
                try f.remove(path)
                try root.makeSymlink(path, target: try FormatOneSymlinkTarget.store(target: Array(target.utf8), keys: vault.filesystemKeys, root: root))
            }
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 5), timespec(tv_sec: 1_000_000_001, tv_nsec: 7)]
            guard utimensat(root.rawValue, link, &times, AT_SYMLINK_NOFOLLOW) == 0 else { throw Errno.current }
            // A rename cut short: its temporary symlink and that one's out-of-line target.
            let location = SymlinkLocation(vaultID: vault.vaultID, directoryID: .random(), name: Array("x".utf8))
            let cutShort = try SymlinkTarget.store(target: Array(Fixture.longTarget.utf8), at: location, keys: vault.filesystemKeys, root: root)
            try root.makeSymlink(ReservedNames.temporaryPrefix + "left", target: cutShort)
        }
        let report = try f.check()
        #expect(report.findings.isEmpty && report.exitCode == .success)
        #expect((report.formatOneSymlinks, report.symlinksUpgraded, report.temporaryFilesRemoved) == (2, 0, 2))
        #expect(report.summary.hasSuffix("in format 1, their target not bound to their name: 2 symlinks (--repair rewrites them)"))

        let repaired = try f.check(repair: true)
        #expect(repaired.findings.isEmpty && repaired.exitCode == .success)
        #expect((repaired.formatOneSymlinks, repaired.symlinksUpgraded) == (0, 2))
        #expect(repaired.summary.hasSuffix("; 2 symlinks rewritten in format 3"))
        let root = try FileDescriptor.open(path: f.backing, [.readOnly, .directory])
        defer { root.close() }
        let newLong = try root.readSymlink(longlink)
        #expect(try root.readSymlink(link).hasPrefix("3.@") && newLong.hasPrefix("3.@"))
        let status = try root.status(of: link)
        #expect((status.st_mtim.tv_sec, status.st_mtim.tv_nsec) == (1_000_000_001, 7), "its access time moves when it is read")
        #expect(status.st_uid == getuid())
        let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
        defer { links.close() }
        #expect(Set(try links.entryNames()) == Set([try root.readSymlink(link), newLong].map { String($0.dropFirst(3)) }),
                "the old blob is gone, the new ones in place")
        #expect(try !root.entryNames().contains { $0.hasPrefix(ReservedNames.temporaryPrefix) })

        let again = try f.check()
        #expect(again.findings.isEmpty && (again.formatOneSymlinks, again.symlinksUpgraded) == (0, 0))
        var targets: [[UInt8]] = []
        try f.populate { fs, _ in
            for name in ["link", "longlink"] { targets.append(try fs.readLink(fs.lookup(Array(name.utf8), in: fs.root))) }
        }
        #expect(targets == [Array("notes".utf8), Array(Fixture.longTarget.utf8)])
    }

    /// A target marked with a format this build does not know was made by a newer protfs:
    /// reported as not checked (exit 1), never moved, even under `--repair`.
    @Test func symlinkTargetsOfANewerFormatAreLeftAlone() throws {
        let f = try Fixture()
        let link = try f.backingPath("link")
        try f.remove(ReservedNames.links + "/" + String(try FileDescriptor.currentWorkingDirectory.readSymlink(f.full(link)).dropFirst(3)))
        try f.remove(link)
        guard symlink("4.AAAAAAAA", f.full(link)) == 0 else { throw Errno.current }
        let report = try f.check(repair: true)
        #expect(problems(report) == ["/link": .symlinkTargetNewer])
        #expect(report.findings.first?.outcome == .notRepaired && report.findings.first?.line.hasPrefix("unchecked: /link: ") == true)
        #expect(report.exitCode == .failure)
        #expect(try FileDescriptor.currentWorkingDirectory.readSymlink(f.full(link)) == "4.AAAAAAAA")
    }

    // MARK: directories

    @Test func damagedDirectoryMetadataMovesTheWholeDirectory() throws {
        let f = try Fixture()
        let d = try f.backingPath("d"), e = try f.backingPath("d/e")
        try f.flipByte(e + "/" + DirectoryMetadata.fileName, at: 40)
        let report = try f.check()
        #expect(problems(report) == ["/d/e": .directoryMetadataDamaged])
        #expect(report.files == 7, "nothing inside is checked: its names cannot be read")

        // A FIFO planted as another directory's metadata is never opened for reading.
        try f.remove(d + "/" + DirectoryMetadata.fileName)
        guard mkfifo(f.full(d + "/" + DirectoryMetadata.fileName), 0o600) == 0 else { throw Errno.current }
        let fifo = try f.check(repair: true)
        #expect(problems(fifo) == ["/d": .directoryMetadataDamaged])
        #expect(fifo.findings.first?.outcome == .moved(to: d.split(separator: "/").last.map(String.init)!))
        let again = try f.check()
        #expect(again.findings.isEmpty && again.directories == 1)
    }

    /// Objects as the first builds wrote them (on-disk format 1, the class in the clear) are
    /// no damage; they are counted, and `--repair` rewrites directory records in format 2.
    @Test func formatOneObjectsAreCountedAndDirectoriesUpgraded() throws {
        let f = try Fixture()
        try f.populate { fs, caller in try Fixture.write(fs, "old", in: fs.root, size: 0, caller: caller) }
        let d = try f.backingPath("d"), old = try f.backingPath("old")
        do {
            let vault = try Vault.open(backing: f.backing, deviceKeyPath: f.deviceKey)
            let directory = try FileDescriptor.open(path: f.full(d), [.readOnly, .directory])
            defer { directory.close() }
            let record = try DirectoryMetadata.read(in: directory, vaultID: vault.vaultID, keys: vault.filesystemKeys)
            try DirectoryMetadata(directoryID: record.directoryID, protectionClass: record.protectionClass, classNonce: nil)
                .replace(in: directory, vaultID: vault.vaultID, keys: vault.filesystemKeys)
            // An empty file is its header alone: write one in format 1, and the hint bound to its id.
            let (header, _) = try FileHeader.create(protectionClass: .none, keyring: vault.keyring, version: 1)
            let file = try FileDescriptor.open(path: f.full(old), [.writeOnly, .truncate])
            defer { file.close() }
            try file.writeAll(header.encoded())
            try ClassHint.write(.none, to: file, objectID: header.fileID, keys: vault.filesystemKeys)
        }
        let report = try f.check()
        #expect(report.findings.isEmpty && report.exitCode == .success)
        #expect((report.formatOneFiles, report.formatOneDirectories, report.directoryRecordsUpgraded) == (1, 1, 0))
        #expect(report.summary.hasSuffix("in format 1, their class readable in the backing directory: 1 file, 1 directory"
                                         + " (--repair rewrites directories; copying a file through the mount re-creates it)"))
        let repaired = try f.check(repair: true)
        #expect(repaired.findings.isEmpty)
        #expect((repaired.formatOneFiles, repaired.formatOneDirectories, repaired.directoryRecordsUpgraded) == (1, 0, 1))
        #expect(try FileManager.default.attributesOfItem(atPath: f.full(d + "/" + DirectoryMetadata.fileName))[.size] as? Int == 96)
        let again = try f.check()
        #expect(again.findings.isEmpty && (again.formatOneFiles, again.formatOneDirectories) == (1, 0))
        #expect(again.files == 9 && again.directories == 3, "the rewritten directory is read as before")
    }

    @Test func missingDirectoryMetadataIsReported() throws {
        let f = try Fixture()
        let e = try f.backingPath("d/e")
        try f.remove(e + "/" + DirectoryMetadata.fileName)
        #expect(problems(try f.check()) == ["/d/e": .directoryMetadataMissing])
    }

    // MARK: xattrs

    @Test func damagedExtendedAttributesAreRemoved() throws {
        let f = try Fixture()
        let notes = f.full(try f.backingPath("notes"))
        let names = try listxattrOrThrow(notes).filter { $0.hasPrefix(XattrCodec.backingPrefix) }
        #expect(names.count == 1)
        var value = try getxattrOrThrow(notes, names[0])
        value[30] ^= 1
        try setxattrOrThrow(notes, names[0], value)
        let stray = XattrCodec.backingPrefix + Base64URL.encode([UInt8](repeating: 9, count: 32))
        try setxattrOrThrow(notes, stray, [1])

        let report = try f.check(repair: true)
        #expect(report.findings.map(\.problem).sorted { $0.description < $1.description } == [
            .attributeNameUndecodable(backingName: stray),
            .attributeValueDamaged(name: Array("user.note".utf8), backingName: names[0]),
        ])
        #expect(report.findings.contains { $0.line == "damaged: /notes: value of extended attribute user.note fails authentication; removed" })
        #expect(try listxattrOrThrow(notes).filter { $0.hasPrefix(XattrCodec.backingPrefix) }.isEmpty)
        #expect(try f.check().findings.isEmpty)
    }

    @Test func damagedPackedAttributesAreRemoved() throws {
        let f = try Fixture()
        let notes = f.full(try f.backingPath("notes"))
        var blob = try getxattrOrThrow(notes, PackedXattrs.backingName)
        blob[blob.count - 1] ^= 1
        try setxattrOrThrow(notes, PackedXattrs.backingName, blob)

        let report = try f.check(repair: true)
        #expect(report.findings.map(\.problem) == [.packedAttributesDamaged])
        #expect(report.findings.contains {
            $0.line == "damaged: /notes: packed extended attributes fail authentication (tampered, or copied from another object); removed"
        })
        #expect(try !listxattrOrThrow(notes).contains(PackedXattrs.backingName))
        #expect(try f.check().findings.isEmpty)
        try f.populate { fs, _ in
            let node = try fs.lookup(Array("notes".utf8), in: fs.root)
            #expect(try fs.extendedAttribute(Array("user.note".utf8), of: node) == Fixture.longNote, "the unpacked one stays")
        }
    }

    /// A crash between writing an attribute's new place and removing its old one leaves a
    /// copy in its own xattr that the blob shadows: not damage the mount shows, but stale.
    @Test func shadowedUnpackedCopiesAreRemoved() throws {
        let f = try Fixture()
        let notes = f.full(try f.backingPath("notes"))
        var stale = ""
        try f.populate { fs, _ in
            let node = try fs.lookup(Array("notes".utf8), in: fs.root)
            let objectID = try fs.header(of: node).fileID, keys = fs.vault.filesystemKeys, name = Array("user.tag".utf8)
            stale = try XattrCodec.backingName(for: name, objectID: objectID, keys: keys)
            try node.descriptor.setExtendedAttribute(stale, try XattrCodec.sealValue(Array("old".utf8), name: name, objectID: objectID, keys: keys))
            #expect(try fs.extendedAttribute(name, of: node) == Array("t".utf8), "the blob wins")
            #expect(try fs.extendedAttributeNames(of: node).filter { $0 == name }.count == 1)
        }
        let report = try f.check(repair: true)
        #expect(report.findings.map(\.problem) == [.attributeShadowed(name: Array("user.tag".utf8), backingName: stale)])
        #expect(try !listxattrOrThrow(notes).contains(stale))
        #expect(try f.check().findings.isEmpty)
    }

    // MARK: exit codes

    @Test func exitCodesFollowWhatIsLeft() {
        let somewhere = VaultFinding.Location.mount(path: Array("/x".utf8), backingPath: "x")
        var report = VaultCheckReport()
        #expect(report.exitCode == .success)
        report.findings = [VaultFinding(location: somewhere, problem: .foreign)]
        #expect(report.exitCode == .success, "a foreign entry is not damage")
        report.findings.append(VaultFinding(location: somewhere, problem: .unreadable(operation: "list", errno: .permissionDenied)))
        #expect(report.exitCode == .failure, "something could not be checked")
        #expect(report.findings.last?.line == "unchecked: /x: cannot list: Permission denied; not checked")
        var damage = VaultFinding(location: somewhere, problem: .symlinkTargetDamaged)
        report.findings.append(damage)
        #expect(report.exitCode == .damage, "damage wins over an incomplete check")
        damage.outcome = .moved(to: "x")
        report.findings[report.findings.count - 1] = damage
        #expect(report.exitCode == .failure && report.repairedCount == 1)
        report.findings[report.findings.count - 1].outcome = .repairFailed(.notPermitted)
        #expect(report.exitCode == .damage)
        #expect(report.findings.last?.line.hasSuffix("; repair failed: Operation not permitted") == true)
    }

    // MARK: printing

    @Test func namesArePrintedOnOneLine() {
        #expect(DisplayName.escaped(Array("a/b c".utf8)) == "a/b c")
        #expect(DisplayName.escaped(Array("ça\nva\\".utf8)) == "ça\\x0ava\\x5c")
        #expect(DisplayName.escaped([0x66, 0xFF, 0xC3]) == "f\\xff\\xc3")
        #expect(VaultFinding.Location.undecodable(directory: Array("/d".utf8), backingPath: "x/Abc").description == "/d/[backing name Abc]")
    }
}

func getxattrOrThrow(_ path: String, _ name: String) throws -> [UInt8] {
    let fd = try FileDescriptor.open(path: path, [.readOnly])
    defer { fd.close() }
    return try fd.extendedAttribute(name)
}

func setxattrOrThrow(_ path: String, _ name: String, _ value: [UInt8]) throws {
    let fd = try FileDescriptor.open(path: path, [.readOnly])
    defer { fd.close() }
    try fd.setExtendedAttribute(name, value)
}

func listxattrOrThrow(_ path: String) throws -> [String] {
    let fd = try FileDescriptor.open(path: path, [.readOnly])
    defer { fd.close() }
    return try fd.extendedAttributeNames()
}
