import Foundation
import Glibc
@testable import ProtfsFuse
import Testing

@Suite("Daemon log: damage once per message, in bounded memory")
struct DaemonLogTests {
    /// Runs `body` with stderr going to a file; returns what was written there.
    func capturingStandardError(_ body: () -> Void) throws -> String {
        let path = NSTemporaryDirectory() + "protfs-log-\(UUID().uuidString)"
        defer { unlink(path) }
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(file >= 0)
        let saved = dup(STDERR_FILENO)
        dup2(file, STDERR_FILENO)
        close(file)
        body()
        dup2(saved, STDERR_FILENO)
        close(saved)
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// Issue 15: every distinct damage message was remembered for the life of the mount, so a
    /// hostile backing directory could grow the daemon without limit.
    @Test("Distinct damage past the memory's size forgets the oldest, repeats stay quiet")
    func boundedMemory() throws {
        let log = DaemonLog(debug: false)
        let distinct = DaemonLog.rememberedDamage + 1000
        let output = try capturingStandardError {
            for i in 0 ..< distinct { log.damage("object \(i) is damaged") }
            log.damage("object \(distinct - 1) is damaged")  // remembered: not logged again
            log.damage("object 0 is damaged")  // forgotten: logged again
        }
        #expect(log.rememberedDamageCount == DaemonLog.rememberedDamage)
        // Other tests of the process may write to stderr meanwhile: only this log's lines count.
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("protfs: damage: object ") }
        #expect(lines.count == distinct + 1)
        #expect(lines.last == "protfs: damage: object 0 is damaged")
    }
}
