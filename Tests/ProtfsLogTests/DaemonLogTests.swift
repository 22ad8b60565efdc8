import Foundation
import Glibc
@testable import ProtfsLog
import Testing

@Suite("Daemon log: damage once per message, in bounded memory")
struct DaemonLogTests {
    /// Runs `body` with a log writing to a file of its own, not the process's stderr (which
    /// other tests of the process share); returns what the log wrote.
    func capturingOutput(_ body: (DaemonLog) -> Void) throws -> (DaemonLog, String) {
        let path = NSTemporaryDirectory() + "protfs-log-\(UUID().uuidString)"
        defer { unlink(path) }
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(file >= 0)
        let log = DaemonLog(debug: false, output: file)
        body(log)
        close(file)
        return (log, try String(contentsOfFile: path, encoding: .utf8))
    }

    /// Issue 15: every distinct damage message was remembered for the life of the mount, so a
    /// hostile backing directory could grow the daemon without limit.
    @Test("Distinct damage past the memory's size forgets the oldest, repeats stay quiet")
    func boundedMemory() throws {
        let distinct = DaemonLog.rememberedDamage + 1000
        let (log, output) = try capturingOutput { log in
            for i in 0 ..< distinct { log.damage("object \(i) is damaged") }
            log.damage("object \(distinct - 1) is damaged")  // remembered: not logged again
            log.damage("object 0 is damaged")  // forgotten: logged again
        }
        #expect(log.rememberedDamageCount == DaemonLog.rememberedDamage)
        let lines = output.split(separator: "\n")
        #expect(lines.count == distinct + 1)
        #expect(lines.allSatisfy { $0.hasPrefix("protfs: damage: object ") })
        #expect(lines.last == "protfs: damage: object 0 is damaged")
    }
}
