import Foundation
import Testing
import ProtfsTestSupport
import ProtfsSystem
@testable import ProtfsFormat

/// Known answers for FORMAT.md "Symlinks", format 3 (`Vectors/symlinks-v3`): blobs sealed to
/// one place, or to two mid-rename, with a fixed nonce, computed from the document alone by
/// `make-vectors.py`. A failure here means the format changed.
@Suite struct MovableSymlinkVectorTests {
    struct Vectors: Decodable {
        struct Place: Decodable { let directoryID, name: String }
        struct Symlink: Decodable { let target, backingTarget, blob: String; let places: [Place] }
        let filesystemKey, vaultID: String
        let symlinkTargets: [Symlink]
    }

    @Test func blobsOpenAtTheirPlacesOnly() throws {
        let folder = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil))
        let vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: folder.appendingPathComponent("symlinks-v3/symlinks-v3.json")))
        let keys = try filesystemKeys(hex: vectors.filesystemKey)
        #expect(vectors.symlinkTargets.contains { $0.places.count == 2 })
        try withScratchDirectory { root in
            try root.makeDirectory("protfs.links", mode: 0o700)
            let links = try FileDescriptor.open("protfs.links", in: root, [.readOnly, .directory])
            defer { links.close() }
            for vector in vectors.symlinkTargets {
                let target = try #require(hexBytes(vector.target))
                try links.writeFileAtomically(String(vector.backingTarget.dropFirst(3)), contents: try #require(hexBytes(vector.blob)))
                #expect(SymlinkTarget.format(of: vector.backingTarget) == .movable)
                #expect(SymlinkTarget.plaintextLength(backingTarget: vector.backingTarget, root: root) == target.count)
                for place in vector.places {
                    let name = try #require(hexBytes(place.name))
                    let location = SymlinkLocation(vaultID: try ObjectID(hex: vectors.vaultID), directoryID: try ObjectID(hex: place.directoryID),
                                                   name: name)
                    #expect(try SymlinkTarget.load(backingTarget: vector.backingTarget, at: location, keys: keys, root: root) == target)
                    let elsewhere = SymlinkLocation(vaultID: location.vaultID, directoryID: location.directoryID, name: name + [0x21])
                    #expect(throws: Errno.io) { try SymlinkTarget.load(backingTarget: vector.backingTarget, at: elsewhere, keys: keys, root: root) }
                }
            }
        }
    }
}
