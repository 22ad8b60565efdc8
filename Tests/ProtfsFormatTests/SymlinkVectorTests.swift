import Foundation
import Testing
import ProtfsTestSupport
import ProtfsSystem
@testable import ProtfsFormat

/// Known answers for FORMAT.md "Symlinks", format 2 (`Vectors/symlinks-v2`): targets sealed to
/// their location with a fixed nonce (and link id), computed from the document alone by
/// `make-vectors.py`. Opening them pins the key, the backing forms and the associated data;
/// the format-1 answers stay in `names-v1.json`. A failure here means the format changed.
@Suite struct SymlinkVectorTests {
    struct Vectors: Decodable {
        struct Symlink: Decodable { let name, target, backingTarget: String; let blob: String? }
        let filesystemKey, vaultID, directoryID: String
        let symlinkTargets: [Symlink]
    }

    let vectors: Vectors
    let keys: FilesystemKeys

    init() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        let file = folder.appendingPathComponent("symlinks-v2/symlinks-v2.json")
        vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: file))
        keys = try filesystemKeys(hex: vectors.filesystemKey)
    }

    func location(_ name: [UInt8]) throws -> SymlinkLocation {
        SymlinkLocation(vaultID: try ObjectID(hex: vectors.vaultID), directoryID: try ObjectID(hex: vectors.directoryID), name: name)
    }

    @Test func coversBothForms() {
        #expect(vectors.symlinkTargets.contains { $0.blob != nil })
        #expect(vectors.symlinkTargets.contains { $0.backingTarget.utf8.count == SymlinkTarget.maximumInlineLength })
    }

    @Test func targetsOpenWhereTheyWereSealedOnly() throws {
        try withScratchDirectory { root in
            for vector in vectors.symlinkTargets {
                let target = try #require(hexBytes(vector.target)), name = try #require(hexBytes(vector.name))
                if let blob = vector.blob {
                    if !root.exists("protfs.links") { try root.makeDirectory("protfs.links", mode: 0o700) }
                    let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
                    defer { links.close() }
                    try links.writeFileAtomically(String(vector.backingTarget.dropFirst(3)), contents: try #require(hexBytes(blob)))
                }
                #expect(SymlinkTarget.format(of: vector.backingTarget) == .bound)
                #expect(try SymlinkTarget.load(backingTarget: vector.backingTarget, at: location(name), keys: keys, root: root) == target)
                #expect(SymlinkTarget.plaintextLength(backingTarget: vector.backingTarget, root: root) == target.count)
                #expect(throws: Errno.io) {
                    try SymlinkTarget.load(backingTarget: vector.backingTarget, at: location(name + [0x21]), keys: keys, root: root)
                }
            }
        }
    }
}
