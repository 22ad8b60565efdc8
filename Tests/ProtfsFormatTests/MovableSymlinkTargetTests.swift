import Glibc
import Testing
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport
@testable import ProtfsFormat

/// Format 3 (docs/FORMAT.md "Symlinks"): the backing symlink points to its blob only, so a
/// rename re-seals the blob and keeps the backing symlink.
@Suite struct MovableSymlinkTargetTests {
    let keys = randomFilesystemKeys()
    let location = SymlinkLocation(vaultID: .random(), directoryID: .random(), name: Array("link".utf8))
    var elsewhere: SymlinkLocation {
        SymlinkLocation(vaultID: location.vaultID, directoryID: .random(), name: Array("moved".utf8))
    }

    @Test(arguments: [1, 100, 2958, 4095])
    func everyTargetIsOutOfLine(length: Int) throws {
        try withScratchDirectory { root in
            let target = sampleName(length: length, seed: length)
            let backingTarget = try SymlinkTarget.store(target: target, at: location, keys: keys, root: root)
            let linkID = try #require(SymlinkTarget.linkID(of: backingTarget))
            #expect(backingTarget == "3.@" + linkID.description && SymlinkTarget.format(of: backingTarget) == .movable)
            #expect(try SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: keys, root: root) == target)
            #expect(SymlinkTarget.plaintextLength(backingTarget: backingTarget, root: root) == length)
            let blob = try blobContents(linkID, root: root)
            #expect(blob.count == 1 + length + XChaCha20Poly1305.overhead && blob.first == 1)
            SymlinkTarget.removeBlob(backingTarget: backingTarget, root: root)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: keys, root: root) }
            #expect(SymlinkTarget.plaintextLength(backingTarget: backingTarget, root: root) == nil)
        }
    }

    /// While a rename moves it the blob opens at both places; after, at the new one only.
    @Test func aRenameAdmitsTheNewPlaceThenSettlesThere() throws {
        try withScratchDirectory { root in
            let target = Array("/etc/hosts".utf8)
            let destination = elsewhere
            let backingTarget = try SymlinkTarget.store(target: target, at: location, keys: keys, root: root)
            try SymlinkTarget.admit(backingTarget, from: location, to: destination, keys: keys, root: root)
            for place in [location, destination] {
                #expect(try SymlinkTarget.load(backingTarget: backingTarget, at: place, keys: keys, root: root) == target)
            }
            #expect(SymlinkTarget.plaintextLength(backingTarget: backingTarget, root: root) == target.count)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: backingTarget, at: elsewhere, keys: keys, root: root) }
            try SymlinkTarget.settle(backingTarget, at: destination, keys: keys, root: root)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: backingTarget, at: location, keys: keys, root: root) }
            #expect(try SymlinkTarget.load(backingTarget: backingTarget, at: destination, keys: keys, root: root) == target)
            #expect(throws: Errno.invalid) {
                try SymlinkTarget.settle(try FormatTwoSymlinkTarget.store(target: target, at: location, keys: keys, root: root),
                                         at: location, keys: keys, root: root)
            }
        }
    }

    /// A blob copied over another link's, a backing target naming another blob, a tampered
    /// count or record: each is damage.
    @Test func copiedOrTamperedBlobsFail() throws {
        try withScratchDirectory { root in
            let first = try SymlinkTarget.store(target: Array("first".utf8), at: location, keys: keys, root: root)
            let second = try SymlinkTarget.store(target: Array("other".utf8), at: location, keys: keys, root: root)
            let firstID = try #require(SymlinkTarget.linkID(of: first)), secondID = try #require(SymlinkTarget.linkID(of: second))
            let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
            defer { links.close() }
            let original = try blobContents(firstID, root: root)
            try links.writeFileAtomically(secondID.description, contents: original)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: second, at: location, keys: keys, root: root) }
            var tampered: [[UInt8]] = [[], [0] + original.dropFirst(), [3] + original.dropFirst(), [2] + original.dropFirst(),
                                       Array(original.dropLast()), original + [0]]
            for index in stride(from: 1, to: original.count, by: 7) {
                var flipped = original
                flipped[index] ^= 0x20
                tampered.append(flipped)
            }
            for contents in tampered {
                try links.writeFileAtomically(firstID.description, contents: contents)
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, at: location, keys: keys, root: root) }
            }
            for text in ["3.", "3.@", "3." + firstID.description, "3.@" + firstID.description.uppercased(), "3.@" + firstID.description + "0"] {
                #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: text, at: location, keys: keys, root: root) }
                #expect(SymlinkTarget.plaintextLength(backingTarget: text, root: root) == nil)
            }
            // The location is part of the sealing: unknown, it opens nowhere.
            try links.writeFileAtomically(firstID.description, contents: original)
            #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: first, at: nil, keys: keys, root: root) }
        }
    }

    private func blobContents(_ linkID: ObjectID, root: FileDescriptor) throws -> [UInt8] {
        let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
        defer { links.close() }
        let blob = try FileDescriptor.open(linkID.description, in: links, [.readOnly])
        defer { blob.close() }
        return try blob.readAll()
    }
}
