import Glibc
import Testing
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsCore

@Suite struct SymlinkTargetTests {
    let keys = randomFilesystemKeys()

    /// The longest target stored inline: base64url(target + 40) must fit in 4000 bytes.
    static let longestInline = 2960

    @Test(arguments: [1, 100, longestInline, longestInline + 1, 4000, 4095])
    func roundTripsThroughARealSymlink(length: Int) throws {
        try withScratchDirectory { root in
            let target = sampleName(length: length, seed: length)
            let backingTarget = try SymlinkTarget.store(target: target, keys: keys, root: root)
            try root.makeSymlink("link", target: backingTarget)
            let readBack = try root.readSymlink("link")
            #expect(readBack == backingTarget)
            #expect(readBack.utf8.count <= SymlinkTarget.maximumInlineLength)
            #expect(try SymlinkTarget.load(backingTarget: readBack, keys: keys, root: root) == target)
            #expect(SymlinkTarget.plaintextLength(backingTarget: readBack, root: root) == length)

            let outOfLine = length > Self.longestInline
            #expect(readBack.hasPrefix("@") == outOfLine)
            #expect(root.exists("protfs.links") == outOfLine)
            if outOfLine {
                let links = try root.status(of: "protfs.links")
                #expect(links.isDirectory && links.st_mode & 0o777 == 0o700)
                let linkIDHex = String(readBack.dropFirst())
                #expect(linkIDHex.utf8.count == 32)
                let linksDirectory = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
                defer { linksDirectory.close() }
                #expect(try linksDirectory.entryNames() == [linkIDHex])
                SymlinkTarget.removeBlob(backingTarget: readBack, root: root)
                #expect(try linksDirectory.entryNames().isEmpty)
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: readBack, keys: keys, root: root) }
                #expect(SymlinkTarget.plaintextLength(backingTarget: readBack, root: root) == nil)
            }
        }
    }

    @Test func refusesEmptyAndOverlongTargets() throws {
        try withScratchDirectory { root in
            #expect(throws: Errno.noEntry) { try SymlinkTarget.store(target: [], keys: keys, root: root) }
            #expect(throws: Errno.nameTooLong) {
                try SymlinkTarget.store(target: sampleName(length: 4096), keys: keys, root: root)
            }
        }
    }

    @Test func tamperedInlineTargetsFail() throws {
        try withScratchDirectory { root in
            let backingTarget = try SymlinkTarget.store(target: Array("/etc/passwd".utf8), keys: keys, root: root)
            let sealed = try #require(Base64URL.decode(backingTarget))
            for index in sealed.indices {
                var tampered = sealed
                tampered[index] ^= 0x01
                #expect(throws: Errno.io) {
                    try SymlinkTarget.load(backingTarget: Base64URL.encode(tampered), keys: keys, root: root)
                }
            }
            let malformed = ["", "A", backingTarget + "=", "/etc/passwd", String(backingTarget.dropLast(4)),
                             Base64URL.encode(Array(sealed[0..<40]))]
            for text in malformed {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: text, keys: keys, root: root) }
            }
            #expect(throws: Errno.io) {
                try SymlinkTarget.load(backingTarget: backingTarget, keys: randomFilesystemKeys(), root: root)
            }
        }
    }

    @Test func tamperedOutOfLineTargetsFail() throws {
        try withScratchDirectory { root in
            let first = try SymlinkTarget.store(target: sampleName(length: 3500, seed: 1), keys: keys, root: root)
            let second = try SymlinkTarget.store(target: sampleName(length: 3600, seed: 2), keys: keys, root: root)
            let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
            defer { links.close() }
            let firstBlob = String(first.dropFirst()), secondBlob = String(second.dropFirst())

            // A blob copied over another link's: its associated data names the other link id.
            let original = try FileDescriptor.open(firstBlob, in: links, [.readOnly]).readAllAndClose()
            try links.writeFileAtomically(secondBlob, contents: original)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: second, keys: keys, root: root) }

            // Any flipped byte.
            for index in stride(from: 0, to: original.count, by: 97) {
                var tampered = original
                tampered[index] ^= 0x40
                try links.writeFileAtomically(firstBlob, contents: tampered)
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, keys: keys, root: root) }
            }

            // Truncated, or not a regular file (a FIFO is never opened for reading: no hang).
            try links.writeFileAtomically(firstBlob, contents: Array(original.dropLast()))
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, keys: keys, root: root) }
            try links.removeFile(firstBlob)
            #expect(mkfifoat(links.rawValue, firstBlob, 0o600) == 0)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, keys: keys, root: root) }
            #expect(SymlinkTarget.plaintextLength(backingTarget: first, root: root) == nil)

            // Malformed link ids.
            for text in ["@", "@" + firstBlob.uppercased(), "@" + firstBlob + "0", "@../" + String(firstBlob.dropFirst(3))] {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: text, keys: keys, root: root) }
                #expect(SymlinkTarget.plaintextLength(backingTarget: text, root: root) == nil)
            }
        }
    }

    @Test func plaintextLengthNeedsNoKeyAndRejectsImpossibleLengths() {
        let root = FileDescriptor.currentWorkingDirectory
        #expect(SymlinkTarget.plaintextLength(backingTarget: Base64URL.encode([UInt8](repeating: 0, count: 41)), root: root) == 1)
        #expect(SymlinkTarget.plaintextLength(backingTarget: Base64URL.encode([UInt8](repeating: 0, count: 40)), root: root) == nil)
        #expect(SymlinkTarget.plaintextLength(backingTarget: "A", root: root) == nil)
        #expect(SymlinkTarget.plaintextLength(backingTarget: String(repeating: "A", count: 4000), root: root) == 2960)
    }

    @Test func removeBlobIgnoresInlineTargets() throws {
        try withScratchDirectory { root in
            let inline = try SymlinkTarget.store(target: Array("x".utf8), keys: keys, root: root)
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
