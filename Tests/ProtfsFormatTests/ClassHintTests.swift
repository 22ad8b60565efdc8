import ProtfsDomain
import Testing
import ProtfsTestSupport
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

@Suite struct ClassHintTests {
    let keys = FilesystemKeys(filesystemKey: .random())

    @Test func sealAndOpen() throws {
        let id = ObjectID.random()
        for protectionClass in ProtectionClass.allCases {
            let value = ClassHint.seal(protectionClass, objectID: id, keys: keys)
            #expect(value.count == 41)
            #expect(try ClassHint.open(value, objectID: id, keys: keys) == protectionClass)
        }
        // Random nonces: the same class twice does not look the same to an observer.
        #expect(ClassHint.seal(.complete, objectID: id, keys: keys) != ClassHint.seal(.complete, objectID: id, keys: keys))
    }

    @Test func tamperedForeignAndTruncatedHintsAreEIO() {
        let id = ObjectID.random()
        let value = ClassHint.seal(.complete, objectID: id, keys: keys)
        for index in value.indices {
            var tampered = value
            tampered[index] ^= 0x01
            #expect(throws: Errno.io) { try ClassHint.open(tampered, objectID: id, keys: keys) }
        }
        #expect(throws: Errno.io) { try ClassHint.open(value, objectID: .random(), keys: keys) }
        #expect(throws: Errno.io) { try ClassHint.open(Array(value.dropLast()), objectID: id, keys: keys) }
        #expect(throws: Errno.io) { try ClassHint.open(value, objectID: id, keys: FilesystemKeys(filesystemKey: .random())) }
    }

    @Test func readAndWriteThroughAPathDescriptor() throws {
        let dir = TemporaryDirectory()
        try dir.write([], to: "file")
        let root = try dir.openDirectory()
        defer { root.close() }
        let object = try FileDescriptor.open("file", in: root, [.path])
        defer { object.close() }
        let id = ObjectID.random()
        #expect(try ClassHint.read(from: object, objectID: id, keys: keys) == nil)
        try ClassHint.write(.completeUnlessOpen, to: object, objectID: id, keys: keys)
        #expect(try ClassHint.read(from: object, objectID: id, keys: keys) == .completeUnlessOpen)
        // A hint copied from another object does not authenticate.
        #expect(throws: Errno.io) { try ClassHint.read(from: object, objectID: .random(), keys: keys) }
    }
}
