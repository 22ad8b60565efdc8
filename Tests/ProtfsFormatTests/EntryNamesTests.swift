import Glibc
import Testing
import ProtfsTestSupport
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsFormat

@Suite struct EntryNamesTests {
    let keys = randomFilesystemKeys()
    let directoryID = ObjectID.random()

    private func make(_ name: [UInt8]) throws -> BackingEntryName {
        try BackingEntryName.make(for: name, in: directoryID, keys: keys)
    }

    private func plaintext(_ backingName: String, in directory: FileDescriptor) -> [UInt8]? {
        BackingEntryName.plaintextName(of: backingName, in: directory, directoryID: directoryID, keys: keys)
    }

    /// Creates an empty file on the backing store under the mount name `name`.
    @discardableResult
    private func createFile(_ name: [UInt8], in directory: FileDescriptor) throws -> BackingEntryName {
        let backing = try make(name)
        try backing.create(in: directory) { (entry: String) throws(Errno) in try directory.makeEmptyFile(entry) }
        return backing
    }

    // MARK: validation

    @Test(arguments: [[], Array(".".utf8), Array("..".utf8), Array("/".utf8), Array("a/b".utf8), [0x61, 0, 0x62], [0]])
    func refusesNamesThatCannotBeOnTheMount(_ name: [UInt8]) {
        #expect(throws: Errno.invalid) { try make(name) }
    }

    @Test func refusesNamesOver255Bytes() throws {
        #expect(throws: Errno.nameTooLong) { try make(sampleName(length: 256)) }
        _ = try make(sampleName(length: 255))
        _ = try make(Array("...".utf8))
        _ = try make(Array(".hidden".utf8))
    }

    @Test func shortAndLongForms() throws {
        for length in [1, 100, 159] {
            guard case .short(let encoded) = try make(sampleName(length: length)) else { Issue.record("\(length)"); continue }
            #expect(encoded.utf8.count <= 255)
            #expect(BackingEntryName.classify(encoded) == .encoded)
        }
        for length in [160, 200, 255] {
            guard case .long(let entry, let sidecar, let encoded) = try make(sampleName(length: length)) else {
                Issue.record("\(length)"); continue
            }
            #expect(entry.hasPrefix("protfs.long.") && entry.utf8.count == 12 + 43)
            #expect(sidecar == entry + ".name")
            #expect(encoded.utf8.count > 255)
            #expect(encoded == SIVNameCipher.entryNames(keys).encrypt(sampleName(length: length), tweak: directoryID))
            #expect(BackingEntryName.classify(entry) == .longEntry)
            #expect(BackingEntryName.classify(sidecar) == .sidecar)
            // Found as an entry itself (a filesystem with a larger NAME_MAX), it is not ours.
            #expect(BackingEntryName.classify(encoded) == .foreign)
        }
    }

    // MARK: classification

    @Test(arguments: ["protfs.keybag", "protfs.dir", "protfs.links", "protfs.tmp.keybag", "protfs.tmp.dir",
                      "protfs.tmp.0123456789abcdef0123456789abcdef", "protfs.long.", "protfs.long.abc",
                      "protfs.long.abc.name", "protfs.future", "protfs.",
                      "protfs.long.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.name.bak",
                      "protfs.long.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB"])
    func reservedNames(_ name: String) {
        #expect(BackingEntryName.classify(name) == .reserved)
    }

    @Test func longEntryAndSidecarNames() {
        let hash = Base64URL.encode([UInt8](repeating: 7, count: 32))
        #expect(BackingEntryName.classify("protfs.long." + hash) == .longEntry)
        #expect(BackingEntryName.classify("protfs.long." + hash + ".name") == .sidecar)
    }

    @Test(arguments: ["lost+found", "a.b", "Zh", "abcde", "readme.txt", "x=", "protfs", "Protfs.keybag", "ß"])
    func foreignNames(_ name: String) {
        #expect(BackingEntryName.classify(name) == .foreign)
    }

    // MARK: readdir on a real directory

    @Test func longNamesRoundTripThroughADirectory() throws {
        try withScratchDirectory { directory in
            let names = [1, 15, 16, 159, 160, 161, 200, 254, 255].map { sampleName(length: $0, seed: $0) }
                + [Array("café".utf8), [0xFF, 0xFE, 0x41]]
            for name in names { try createFile(name, in: directory) }
            try directory.makeEmptyFile("protfs.dir")
            try directory.makeDirectory("protfs.links", mode: 0o700)
            try directory.makeEmptyFile("lost+found")

            let listed = try directory.entryNames()
            #expect(listed.count == names.count + 3 + 5)  // three daemon/foreign files; five long names have sidecars
            let decoded = listed.compactMap { plaintext($0, in: directory) }
            #expect(Set(decoded) == Set(names))
            #expect(decoded.count == names.count)
            for name in names { #expect(directory.exists(try make(name).entry)) }
        }
    }

    @Test func sidecarMustBelongToItsEntry() throws {
        try withScratchDirectory { directory in
            let first = try createFile(sampleName(length: 170, seed: 1), in: directory)
            let second = try createFile(sampleName(length: 180, seed: 2), in: directory)
            guard case .long(let firstEntry, let firstSidecar, let firstEncoded) = first,
                  case .long(let secondEntry, let secondSidecar, let secondEncoded) = second else {
                Issue.record("expected long names"); return
            }
            #expect(plaintext(firstEntry, in: directory) == sampleName(length: 170, seed: 1))

            // Swapped sidecars: both decrypt, but neither hashes to its entry.
            try directory.writeFileAtomically(firstSidecar, contents: Array(secondEncoded.utf8))
            try directory.writeFileAtomically(secondSidecar, contents: Array(firstEncoded.utf8))
            #expect(plaintext(firstEntry, in: directory) == nil)
            #expect(plaintext(secondEntry, in: directory) == nil)

            // Missing sidecar.
            try directory.removeFile(firstSidecar)
            #expect(plaintext(firstEntry, in: directory) == nil)

            // A sidecar that is a directory, or a FIFO (never read: no hang).
            try directory.makeDirectory(firstSidecar, mode: 0o700)
            #expect(plaintext(firstEntry, in: directory) == nil)
            try directory.removeDirectory(firstSidecar)
            #expect(mkfifoat(directory.rawValue, firstSidecar, 0o600) == 0)
            #expect(plaintext(firstEntry, in: directory) == nil)
            try directory.removeFile(firstSidecar)

            // Trailing newline: not the exact encoded name.
            try directory.writeFileAtomically(secondSidecar, contents: Array(secondEncoded.utf8) + [0x0A])
            #expect(plaintext(secondEntry, in: directory) == nil)
        }
    }

    @Test func shortNameDisguisedAsLongIsRefused() throws {
        try withScratchDirectory { directory in
            guard case .short(let encoded) = try make(Array("short".utf8)),
                  case .long(let entry, let sidecar, _) = BackingEntryName.long(encoded: encoded) else {
                Issue.record("expected a short name"); return
            }
            try directory.makeEmptyFile(entry)
            try directory.writeFileAtomically(sidecar, contents: Array(encoded.utf8))
            #expect(plaintext(entry, in: directory) == nil)
        }
    }

    @Test func entryMovedFromAnotherDirectoryIsNotDecoded() throws {
        try withScratchDirectory { directory in
            let foreign = try BackingEntryName.make(for: Array("moved".utf8), in: .random(), keys: keys)
            try directory.makeEmptyFile(foreign.entry)
            #expect(plaintext(foreign.entry, in: directory) == nil)
        }
    }

    // MARK: crash-safe changes

    @Test func removeTakesTheSidecarToo() throws {
        try withScratchDirectory { directory in
            let long = try createFile(sampleName(length: 200), in: directory)
            let short = try createFile(sampleName(length: 20), in: directory)
            try long.remove(in: directory) { (entry: String) throws(Errno) in try directory.removeFile(entry) }
            try short.remove(in: directory) { (entry: String) throws(Errno) in try directory.removeFile(entry) }
            #expect(try directory.entryNames().isEmpty)
        }
    }

    @Test func failedRemoveKeepsTheSidecar() throws {
        try withScratchDirectory { directory in
            let backing = try make(sampleName(length: 200))
            try backing.create(in: directory) { (entry: String) throws(Errno) in try directory.makeDirectory(entry, mode: 0o700) }
            guard case .long(let entry, let sidecar, _) = backing else { Issue.record("expected long"); return }
            let inside = try FileDescriptor.open(entry, in: directory, [.readOnly, .directory])
            try inside.makeEmptyFile("occupant")
            inside.close()
            #expect(throws: Errno.notEmpty) {
                try backing.remove(in: directory) { (entry: String) throws(Errno) in try directory.removeDirectory(entry) }
            }
            #expect(directory.exists(sidecar))
        }
    }

    @Test func failedCreateRemovesOnlyAnUnusedSidecar() throws {
        try withScratchDirectory { directory in
            let backing = try make(sampleName(length: 210))
            guard case .long(_, let sidecar, _) = backing else { Issue.record("expected long"); return }

            #expect(throws: Errno.noSpace) {
                try backing.create(in: directory) { (_: String) throws(Errno) in throw Errno.noSpace }
            }
            #expect(!directory.exists(sidecar))

            try createFile(sampleName(length: 210), in: directory)
            #expect(throws: Errno.exists) { try createFile(sampleName(length: 210), in: directory) }
            #expect(directory.exists(sidecar))
            #expect(plaintext(backing.entry, in: directory) == sampleName(length: 210))
        }
    }

    @Test func renameMovesSidecars() throws {
        try withScratchDirectory { directory in
            let other = ObjectID.random()
            try directory.makeDirectory("sub", mode: 0o700)
            let sub = try FileDescriptor.open("sub", in: directory, [.readOnly, .directory])
            defer { sub.close() }

            // long -> long within a directory.
            let a = try createFile(sampleName(length: 190, seed: 1), in: directory)
            let b = try make(sampleName(length: 191, seed: 2))
            try BackingEntryName.rename(a, in: directory, to: b, in: directory)
            #expect(Set(try directory.entryNames()) == ["sub", b.entry, b.entry + ".name"])
            #expect(plaintext(b.entry, in: directory) == sampleName(length: 191, seed: 2))

            // long -> short, into another directory (encoded for that directory's id).
            let c = try BackingEntryName.make(for: Array("c".utf8), in: other, keys: keys)
            try BackingEntryName.rename(b, in: directory, to: c, in: sub)
            #expect(try directory.entryNames() == ["sub"])
            #expect(try sub.entryNames() == [c.entry])

            // short -> long, back again.
            try BackingEntryName.rename(c, in: sub, to: a, in: directory)
            #expect(try sub.entryNames().isEmpty)
            #expect(plaintext(a.entry, in: directory) == sampleName(length: 190, seed: 1))
        }
    }

    @Test func renameOntoItselfOrAnotherLinkKeepsTheSidecar() throws {
        try withScratchDirectory { directory in
            let a = try createFile(sampleName(length: 230, seed: 3), in: directory)
            try BackingEntryName.rename(a, in: directory, to: a, in: directory)
            #expect(plaintext(a.entry, in: directory) == sampleName(length: 230, seed: 3))

            // Two long names linked to one object: rename(2) does nothing and both stay.
            let b = try make(sampleName(length: 231, seed: 4))
            try b.create(in: directory) { (entry: String) throws(Errno) in
                _ = try syscallRetrying { linkat(directory.rawValue, a.entry, directory.rawValue, entry, 0) }
            }
            try BackingEntryName.rename(a, in: directory, to: b, in: directory)
            #expect(plaintext(a.entry, in: directory) == sampleName(length: 230, seed: 3))
            #expect(plaintext(b.entry, in: directory) == sampleName(length: 231, seed: 4))
        }
    }

    @Test func failedRenameLeavesNoStraySidecar() throws {
        try withScratchDirectory { directory in
            let missing = try make(sampleName(length: 10))
            let destination = try make(sampleName(length: 240))
            #expect(throws: Errno.noEntry) {
                try BackingEntryName.rename(missing, in: directory, to: destination, in: directory)
            }
            #expect(try directory.entryNames().isEmpty)

            let source = try createFile(sampleName(length: 250), in: directory)
            try createFile(sampleName(length: 240), in: directory)
            #expect(throws: Errno.exists) {
                try BackingEntryName.rename(source, in: directory, to: destination, in: directory, flags: .noReplace)
            }
            #expect(plaintext(source.entry, in: directory) == sampleName(length: 250))
            #expect(plaintext(destination.entry, in: directory) == sampleName(length: 240))
        }
    }

    @Test func exchangeKeepsBothSidecars() throws {
        try withScratchDirectory { directory in
            let a = try createFile(sampleName(length: 170, seed: 5), in: directory)
            let b = try createFile(sampleName(length: 5, seed: 6), in: directory)
            try BackingEntryName.rename(a, in: directory, to: b, in: directory, flags: .exchange)
            #expect(plaintext(a.entry, in: directory) == sampleName(length: 170, seed: 5))
            #expect(plaintext(b.entry, in: directory) == sampleName(length: 5, seed: 6))
            #expect(try directory.entryNames().count == 3)
        }
    }
}
