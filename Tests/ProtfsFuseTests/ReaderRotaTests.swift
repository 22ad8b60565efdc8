@testable import ProtfsFuse
import Testing

@Suite("Reader rota: who takes requests from the kernel")
struct ReaderRotaTests {
    static let takeOver: UInt64 = 500
    static let look: UInt64 = 2_000

    func rota() -> ReaderRota { ReaderRota(takeOverAfter: .nanoseconds(Self.takeOver), lookInterval: .nanoseconds(Self.look)) }

    @Test("The first worker reads, the second is the deputy, the rest sleep until called")
    func roles() {
        var rota = rota()
        #expect(rota.claim(0, now: 0) == .read)
        #expect(rota.reader == 0)
        rota.readerWaits(0)
        #expect(rota.claim(1, now: 10) == .sleep(until: nil))
        #expect(rota.deputy == 1)
        #expect(rota.claim(2, now: 10) == .sleep(until: nil))
        #expect(rota.deputy == 1)
        // The reader keeps its role across requests.
        #expect(rota.claim(0, now: 20) == .read)
    }

    @Test("The deputy looks in at intervals while the reader reads, and sleeps while it sleeps")
    func deputyLooksIn() {
        var rota = rota()
        _ = rota.claim(0, now: 0)
        #expect(rota.claim(1, now: 100) == .sleep(until: 100 + Self.look))
        rota.readerWaits(0)
        #expect(rota.claim(1, now: 200) == .sleep(until: nil))
        rota.readerReads(0)
        #expect(rota.claim(1, now: 300) == .sleep(until: 300 + Self.look))
    }

    @Test("A reader busy with one request for too long is replaced by the deputy")
    func takeOver() {
        var rota = rota()
        _ = rota.claim(0, now: 0)
        _ = rota.claim(1, now: 0)
        rota.readerHandles(0, since: 1_000)
        #expect(rota.claim(1, now: 1_100) == .sleep(until: 1_000 + Self.takeOver))
        #expect(rota.claim(2, now: 1_200) == .sleep(until: nil), "a follower does not look in")
        #expect(rota.claim(1, now: 1_000 + Self.takeOver) == .read)
        #expect(rota.reader == 1)
        #expect(rota.deputy == nil)
        #expect(rota.phase == .reading)
        // The old reader, done at last, reports as a former reader: ignored.
        rota.readerHandles(0, since: 2_000)
        rota.readerWaits(0)
        #expect(rota.phase == .reading)
        // It asks again and becomes the new deputy.
        #expect(rota.claim(0, now: 2_100) == .sleep(until: 2_100 + Self.look))
        #expect(rota.deputy == 0)
    }

    @Test("A reader that finishes in time keeps its role")
    func quickRequests() {
        var rota = rota()
        _ = rota.claim(0, now: 0)
        _ = rota.claim(1, now: 0)
        for start in stride(from: UInt64(1_000), to: 10_000, by: 100) {
            rota.readerHandles(0, since: start)
            #expect(rota.claim(1, now: start + 50) == .sleep(until: start + Self.takeOver))
            #expect(rota.claim(0, now: start + 60) == .read)
            #expect(rota.phase == .reading)
        }
        #expect(rota.reader == 0)
    }

    @Test("A reader that resigns (for a large request) is replaced at the next claim")
    func resign() {
        var rota = rota()
        _ = rota.claim(0, now: 0)
        _ = rota.claim(1, now: 0)
        rota.resign(0)
        #expect(rota.reader == nil)
        #expect(rota.claim(1, now: 10) == .read)
        #expect(rota.claim(0, now: 20) == .sleep(until: 20 + Self.look))
        rota.resign(0)
        #expect(rota.reader == 1, "only the reader can resign")
    }

    @Test("After stop, every worker leaves, the reader too")
    func stop() {
        var rota = rota()
        _ = rota.claim(0, now: 0)
        _ = rota.claim(1, now: 0)
        rota.stop()
        #expect(rota.claim(0, now: 10) == .leave)
        #expect(rota.claim(1, now: 10) == .leave)
        #expect(rota.claim(2, now: 10) == .leave)
    }

    @Test("Only READ and WRITE requests from the large size on are handed off")
    func largeRequests() {
        func request(_ opcode: UInt32, total: Int, readSize: UInt32 = 0) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: total)
            withUnsafeBytes(of: opcode.littleEndian) { bytes.replaceSubrange(4 ..< 8, with: $0) }
            if total >= 60 {
                withUnsafeBytes(of: readSize.littleEndian) { bytes.replaceSubrange(56 ..< 60, with: $0) }
            }
            return bytes
        }
        func isLarge(_ bytes: [UInt8]) -> Bool {
            var bytes = bytes
            return bytes.withUnsafeMutableBytes { RequestLoop.isLarge($0) }
        }
        let large = RequestLoop.largeRequestBytes
        #expect(isLarge(request(16, total: 40 + 40 + large)))
        #expect(!isLarge(request(16, total: 40 + 40 + 4096)))
        #expect(isLarge(request(15, total: 80, readSize: UInt32(large))))
        #expect(!isLarge(request(15, total: 80, readSize: UInt32(large - 1))))
        #expect(!isLarge(request(1, total: 40 + large)), "a LOOKUP is never large")
        #expect(!isLarge(request(15, total: 48)), "a READ too short to hold its arguments")
    }
}
