import Glibc
import Testing
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport
@testable import ProtfsFormat

@Suite struct SymlinkTargetTests {
    let keys = randomFilesystemKeys()
    let location = SymlinkLocation(vaultID: .random(), directoryID: .random(), name: Array("link".utf8))

    /// The longest target stored inline: `2.` + base64url(target + 40) must fit in 4000 bytes.
    static let longestInline = 2958

    @Test(arguments: [1, 100, longestInline, longestInline + 1, 4000, 4095])
    func roundTripsThroughARealSymlink(length: Int) throws {
        try withScratchDirectory { root in
            let target = sampleName(length: length, seed: length)
            let backingTarget = try SymlinkTarget.store(target: target, at: location, keys: keys, root: root)
            try root.makeSymlink("link", target: backingTarget)
            let readBack = try root.readSymlink("link")
            #expect(readBack == backingTarget)
            #expect(readBack.utf8.count <= SymlinkTarget.maximumInlineLength)
            #expect(readBack.hasPrefix("2.") && SymlinkTarget.format(of: readBack) == .bound)
            #expect(try SymlinkTarget.load(backingTarget: readBack, at: location, keys: keys, root: root) == target)
            #expect(SymlinkTarget.plaintextLength(backingTarget: readBack, root: root) == length)

            let outOfLine = length > Self.longestInline
            #expect(readBack.hasPrefix("2.@") == outOfLine)
            #expect(root.exists("protfs.links") == outOfLine)
            if outOfLine {
                let links = try root.status(of: "protfs.links")
                #expect(links.isDirectory && links.st_mode & 0o777 == 0o700)
                let linkIDHex = String(readBack.dropFirst(3))
                #expect(linkIDHex.utf8.count == 32)
                let linksDirectory = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
                defer { linksDirectory.close() }
                #expect(try linksDirectory.entryNames() == [linkIDHex])
                SymlinkTarget.removeBlob(backingTarget: readBack, root: root)
                #expect(try linksDirectory.entryNames().isEmpty)
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: readBack, at: location, keys: keys, root: root) }
                #expect(SymlinkTarget.plaintextLength(backingTarget: readBack, root: root) == nil)
            }
        }
    }

    /// docs/FORMAT.md: a sealed target opens only for the symlink it was sealed for, so one
    /// copied to another symlink (in another directory, under another name, in another vault
    /// with the same filesystem key, or read where the location is unknown) is damage.
    @Test(arguments: [100, 3500])
    func opensOnlyWhereItWasSealed(length: Int) throws {
        try withScratchDirectory { root in
            let target = sampleName(length: length, seed: 5)
            let backingTarget = try SymlinkTarget.store(target: target, at: location, keys: keys, root: root)
            let elsewhere = [
                SymlinkLocation(vaultID: location.vaultID, directoryID: location.directoryID, name: Array("other".utf8)),
                SymlinkLocation(vaultID: location.vaultID, directoryID: .random(), name: location.name),
                SymlinkLocation(vaultID: .random(), directoryID: location.directoryID, name: location.name),
                SymlinkLocation(vaultID: location.vaultID, directoryID: location.directoryID, name: location.name + [0]),
            ]
            for other in elsewhere {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: backingTarget, at: other, keys: keys, root: root) }
            }
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: backingTarget, at: nil, keys: keys, root: root) }
            #expect(try SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: keys, root: root) == target)
        }
    }

    /// An inline target sealed for a name that starts with a link id does not open as that
    /// link's blob for the rest of the name: the form is part of the associated data.
    @Test func anInlineTargetIsNoBlob() throws {
        try withScratchDirectory { root in
            let linkID = ObjectID.random()
            let long = SymlinkLocation(vaultID: location.vaultID, directoryID: location.directoryID, name: linkID.bytes + location.name)
            let inline = try SymlinkTarget.store(target: Array("/etc".utf8), at: long, keys: keys, root: root)
            try root.makeDirectory("protfs.links", mode: 0o700)
            let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
            defer { links.close() }
            try links.writeFileAtomically(linkID.description, contents: try #require(Base64URL.decode(String(inline.dropFirst(2)))))
            #expect(throws: Errno.io) {
                try SymlinkTarget.load(backingTarget: "2.@" + linkID.description, at: location, keys: keys, root: root)
            }
        }
    }

    /// Format 1 (sealed to no location) is still read wherever it is, and told apart from
    /// format 2 without a key.
    @Test(arguments: [1, 100, 2960, 2961, 4095])
    func formatOneStillReads(length: Int) throws {
        try withScratchDirectory { root in
            let target = sampleName(length: length, seed: length)
            let backingTarget = try FormatOneSymlinkTarget.store(target: target, keys: keys, root: root)
            #expect(SymlinkTarget.format(of: backingTarget) == .unbound)
            #expect(backingTarget.hasPrefix("@") == (length > 2960))
            #expect((SymlinkTarget.linkID(of: backingTarget) != nil) == (length > 2960))
            for at in [location, nil] {
                #expect(try SymlinkTarget.load(backingTarget: backingTarget, at: at, keys: keys, root: root) == target)
            }
            #expect(SymlinkTarget.plaintextLength(backingTarget: backingTarget, root: root) == length)
            // A format-2 prefix put in front of it does not make it bound to anything.
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: "2." + backingTarget, at: location, keys: keys, root: root) }
        }
    }

    /// A later version will be marked `N.`: such a target is told from damage without a key.
    @Test func newerFormatsAreToldApart() throws {
        for newer in ["3.AAAA", "17.@00", "3."] { #expect(SymlinkTarget.isNewerFormat(newer), "\(newer)") }
        for other in ["2.AAAA", "1.AAAA", "AAAA", "@0011", ".3", "+3.AA", "x3.AA", "99999.AA", "3", ""] {
            #expect(!SymlinkTarget.isNewerFormat(other), "\(other)")
        }
        #expect(throws: Errno.io) {
            try SymlinkTarget.load(backingTarget: "3.AAAA", at: location, keys: keys, root: .currentWorkingDirectory)
        }
    }

    @Test func refusesEmptyAndOverlongTargets() throws {
        try withScratchDirectory { root in
            #expect(throws: Errno.noEntry) { try SymlinkTarget.store(target: [], at: location, keys: keys, root: root) }
            #expect(throws: Errno.nameTooLong) {
                try SymlinkTarget.store(target: sampleName(length: 4096), at: location, keys: keys, root: root)
            }
        }
    }

    @Test func tamperedInlineTargetsFail() throws {
        try withScratchDirectory { root in
            let backingTarget = try SymlinkTarget.store(target: Array("/etc/passwd".utf8), at: location, keys: keys, root: root)
            let sealed = try #require(Base64URL.decode(String(backingTarget.dropFirst(2))))
            for index in sealed.indices {
                var tampered = sealed
                tampered[index] ^= 0x01
                #expect(throws: Errno.io) {
                    try SymlinkTarget.load(backingTarget: "2." + Base64URL.encode(tampered), at: location, keys: keys, root: root)
                }
            }
            let malformed = ["", "A", "2.", "2", backingTarget + "=", "/etc/passwd", String(backingTarget.dropLast(4)),
                             String(backingTarget.dropFirst(2)), "3" + backingTarget.dropFirst(), "2.2." + backingTarget.dropFirst(2),
                             "2." + Base64URL.encode(Array(sealed[0..<40]))]
            for text in malformed {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: text, at: location, keys: keys, root: root) }
            }
            #expect(throws: Errno.io) {
                try SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: randomFilesystemKeys(), root: root)
            }
        }
    }

    @Test func tamperedOutOfLineTargetsFail() throws {
        try withScratchDirectory { root in
            let first = try SymlinkTarget.store(target: sampleName(length: 3500, seed: 1), at: location, keys: keys, root: root)
            let second = try SymlinkTarget.store(target: sampleName(length: 3600, seed: 2), at: location, keys: keys, root: root)
            let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
            defer { links.close() }
            let firstBlob = String(first.dropFirst(3)), secondBlob = String(second.dropFirst(3))

            // A blob copied over another link's: its associated data names the other link id.
            let original = try FileDescriptor.open(firstBlob, in: links, [.readOnly]).readAllAndClose()
            try links.writeFileAtomically(secondBlob, contents: original)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: second, at: location, keys: keys, root: root) }

            // Any flipped byte.
            for index in stride(from: 0, to: original.count, by: 97) {
                var tampered = original
                tampered[index] ^= 0x40
                try links.writeFileAtomically(firstBlob, contents: tampered)
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, at: location, keys: keys, root: root) }
            }

            // Truncated, or not a regular file (a FIFO is never opened for reading: no hang).
            try links.writeFileAtomically(firstBlob, contents: Array(original.dropLast()))
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, at: location, keys: keys, root: root) }
            try links.removeFile(firstBlob)
            #expect(mkfifoat(links.rawValue, firstBlob, 0o600) == 0)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, at: location, keys: keys, root: root) }
            #expect(SymlinkTarget.plaintextLength(backingTarget: first, root: root) == nil)

            // Malformed link ids.
            for text in ["2.@", "2.@" + firstBlob.uppercased(), "2.@" + firstBlob + "0", "2.@../" + String(firstBlob.dropFirst(3))] {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: text, at: location, keys: keys, root: root) }
                #expect(SymlinkTarget.plaintextLength(backingTarget: text, root: root) == nil)
            }
        }
    }

    @Test func plaintextLengthNeedsNoKeyAndRejectsImpossibleLengths() {
        let root = FileDescriptor.currentWorkingDirectory
        for prefix in ["", "2."] {
            #expect(SymlinkTarget.plaintextLength(backingTarget: prefix + Base64URL.encode([UInt8](repeating: 0, count: 41)), root: root) == 1)
            #expect(SymlinkTarget.plaintextLength(backingTarget: prefix + Base64URL.encode([UInt8](repeating: 0, count: 40)), root: root) == nil)
            #expect(SymlinkTarget.plaintextLength(backingTarget: prefix + "A", root: root) == nil)
        }
        #expect(SymlinkTarget.plaintextLength(backingTarget: String(repeating: "A", count: 4000), root: root) == 2960)
        #expect(SymlinkTarget.plaintextLength(backingTarget: "2." + String(repeating: "A", count: 3998), root: root) == 2958)
        #expect(SymlinkTarget.plaintextLength(backingTarget: "3." + String(repeating: "A", count: 100), root: root) == nil)
    }

    @Test func removeBlobIgnoresInlineTargets() throws {
        try withScratchDirectory { root in
            let inline = try SymlinkTarget.store(target: Array("x".utf8), at: location, keys: keys, root: root)
            SymlinkTarget.removeBlob(backingTarget: inline, root: root)
            #expect(try root.entryNames().isEmpty)
        }
    }
}

private extension FileDescriptor {
    func readAllAndClose() throws(Errno) -> [UInt8] {
        defer { close() }
        return try readAll()
    }
}
