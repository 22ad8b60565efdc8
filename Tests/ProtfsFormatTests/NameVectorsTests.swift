import Foundation
import Testing
import ProtfsTestSupport
import ProtfsCrypto
import ProtfsSystem
@testable import ProtfsFormat

/// Known answers for FORMAT.md "Names" and "Symlinks, xattrs" (`Vectors/names-v1.json`):
/// the name scheme is deterministic, so every encoded name is pinned; the sealed values use
/// a fixed nonce, so opening them pins the keys and associated data. They were computed by an
/// implementation independent of this one. A failure here means the on-disk format changed.
@Suite struct NameVectorsTests {
    struct Vectors: Decodable {
        struct EntryName: Decodable { let directoryID, name, encoded: String; let longEntry: String? }
        struct XattrName: Decodable { let objectID, name, backingName: String }
        struct XattrValue: Decodable { let objectID, name, value, sealed: String }
        struct Symlink: Decodable { let target, backingTarget: String; let blob: String? }
        let filesystemKey: String
        let entryNames: [EntryName]
        let xattrNames: [XattrName]
        let xattrValues: [XattrValue]
        let symlinkTargets: [Symlink]
    }

    let vectors: Vectors
    let keys: FilesystemKeys

    init() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: folder.appendingPathComponent("names-v1.json")))
        keys = try filesystemKeys(hex: vectors.filesystemKey)
    }

    @Test func coversTheLengthsThatMatter() throws {
        let lengths = Set(try vectors.entryNames.map { try #require(hexBytes($0.name)).count })
        #expect(lengths.isSuperset(of: [1, 15, 16, 17, 159, 160, 255]))
        #expect(vectors.entryNames.contains { $0.longEntry != nil })
        #expect(vectors.symlinkTargets.contains { $0.blob != nil })
    }

    @Test func entryNames() throws {
        for vector in vectors.entryNames {
            let name = try #require(hexBytes(vector.name))
            let directoryID = try ObjectID(hex: vector.directoryID)
            let backing = try BackingEntryName.make(for: name, in: directoryID, keys: keys)
            if let longEntry = vector.longEntry {
                #expect(backing == .long(entry: longEntry, sidecar: longEntry + ".name", encoded: vector.encoded))
            } else {
                #expect(backing == .short(vector.encoded))
            }
            #expect(SIVNameCipher.entryNames(keys).decrypt(vector.encoded, tweak: directoryID) == name)
        }
    }

    @Test func xattrNames() throws {
        for vector in vectors.xattrNames {
            let name = try #require(hexBytes(vector.name))
            let objectID = try ObjectID(hex: vector.objectID)
            #expect(try XattrCodec.backingName(for: name, objectID: objectID, keys: keys) == vector.backingName)
            #expect(XattrCodec.name(ofBacking: vector.backingName, objectID: objectID, keys: keys) == name)
        }
    }

    @Test func xattrValues() throws {
        for vector in vectors.xattrValues {
            let sealed = try #require(hexBytes(vector.sealed))
            let opened = try XattrCodec.openValue(sealed, name: try #require(hexBytes(vector.name)),
                                                  objectID: try ObjectID(hex: vector.objectID), keys: keys)
            #expect(opened == hexBytes(vector.value))
        }
    }

    @Test func symlinkTargets() throws {
        try withScratchDirectory { root in
            for vector in vectors.symlinkTargets {
                let target = try #require(hexBytes(vector.target))
                if let blob = vector.blob {
                    if !root.exists("protfs.links") { try root.makeDirectory("protfs.links", mode: 0o700) }
                    let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
                    defer { links.close() }
                    try links.writeFileAtomically(String(vector.backingTarget.dropFirst()), contents: try #require(hexBytes(blob)))
                }
                #expect(try SymlinkTarget.load(backingTarget: vector.backingTarget, at: nil, keys: keys, root: root) == target)
                #expect(SymlinkTarget.plaintextLength(backingTarget: vector.backingTarget, root: root) == target.count)
            }
        }
    }
}
