import Foundation
import Glibc
@testable import ProtfsCommandLine
import ProtfsCrypto
import Testing

@Suite struct PasscodeReaderTests {
    func read(_ contents: [UInt8]) throws -> [UInt8] {
        let file = NSTemporaryDirectory() + "protfs-passcode-\(UUID().uuidString)"
        try Data(contents).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let secret = try PasscodeReader(passcodeFile: file).read()
        return secret.withUnsafeBytes { Array($0) }
    }

    @Test func stripsExactlyOneLineEnding() throws {
        #expect(try read(Array("abc\n".utf8)) == Array("abc".utf8))
        #expect(try read(Array("abc\r\n".utf8)) == Array("abc".utf8))
        #expect(try read(Array("abc".utf8)) == Array("abc".utf8))
        #expect(try read(Array("abc\r".utf8)) == Array("abc\r".utf8))
        #expect(try read(Array(" a b \nsecond line\n".utf8)) == Array(" a b ".utf8))
        #expect(try read(Array("ab\r\r\n".utf8)) == Array("ab\r".utf8))
        #expect(try read([0xFF, 0x00, 0xC3, 0x0A]) == [0xFF, 0x00, 0xC3])  // bytes as given
    }

    @Test func refusesEmptyMissingAndOverlong() throws {
        #expect(throws: PasscodeInputError.empty) { try read(Array("\n".utf8)) }
        #expect(throws: PasscodeInputError.empty) { try read(Array("\r\nx\n".utf8)) }
        #expect(throws: PasscodeInputError.missing) { try read([]) }
        #expect(throws: PasscodeInputError.tooLong(limit: 4096)) { try read([UInt8](repeating: 0x61, count: 5000)) }
        #expect(try read([UInt8](repeating: 0x61, count: 4096) + [0x0A]).count == 4096)
    }

    @Test func readsConsecutiveLinesOfAStream() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let text = Array("old\nnew\r\n".utf8)
        #expect(write(fds[1], text, text.count) == text.count)
        close(fds[1])
        let first = try PasscodeReader.readLine(from: fds[0], source: "pipe")
        let second = try PasscodeReader.readLine(from: fds[0], source: "pipe")
        #expect(first.withUnsafeBytes { Array($0) } == Array("old".utf8))
        #expect(second.withUnsafeBytes { Array($0) } == Array("new".utf8))
        #expect(throws: PasscodeInputError.missing) { try PasscodeReader.readLine(from: fds[0], source: "pipe") }
    }
}
