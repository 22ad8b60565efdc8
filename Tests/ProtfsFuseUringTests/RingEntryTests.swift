import CFuse
import CProtfsUring
import Glibc
@testable import ProtfsFuseUring
import Testing

/// A ring entry as the kernel fills it (FUSE over io_uring): the request handed to libfuse
/// in one piece, the reply laid out for the commit, and what each leaves behind wiped.
@Suite struct RingEntryTests {
    let inHeader = MemoryLayout<fuse_in_header>.size

    /// Writes a request as the kernel does: `fuse_in_header`, the first argument into
    /// `op_in`, the rest into the payload, the payload's size into `ring_ent_in_out`.
    func deliver(to entry: RingEntry, unique: UInt64, firstArgument: [UInt8], payload: [UInt8], claimedLength: Int? = nil,
                 opcode: fuse_opcode = FUSE_SETXATTR) {
        var header = fuse_in_header()
        header.len = UInt32(claimedLength ?? inHeader + firstArgument.count + payload.count)
        header.opcode = opcode.rawValue
        header.unique = unique
        UnsafeMutableRawPointer(entry.header).storeBytes(of: header, as: fuse_in_header.self)
        withUnsafeMutablePointer(to: &entry.header.pointee.op_in) { UnsafeMutableRawPointer($0).copyMemory(from: firstArgument, byteCount: firstArgument.count) }
        entry.payload.copyMemory(from: payload, byteCount: payload.count)
        entry.header.pointee.ring_ent_in_out.commit_id = unique
        entry.header.pointee.ring_ent_in_out.payload_sz = UInt32(payload.count)
    }

    func reply(_ entry: RingEntry, unique: UInt64, _ body: [UInt8]) {
        var out = fuse_out_header(len: 0, error: 0, unique: unique)
        var body = body
        withUnsafeMutablePointer(to: &out) { header in
            body.withUnsafeMutableBytes { bytes in
                let parts = [iovec(iov_base: UnsafeMutableRawPointer(header), iov_len: MemoryLayout<fuse_out_header>.size),
                             iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)]
                parts.withUnsafeBufferPointer { entry.stageReply($0.baseAddress!, 2) }
            }
        }
    }

    @Test("a request comes out in one piece: header, first argument, then the payload where the kernel put it")
    func requestInOnePiece() throws {
        let entry = try #require(RingEntry(index: 0, payloadBytes: 1 << 20))
        let argument: [UInt8] = Array(repeating: 7, count: 16), payload = Array("name\0value".utf8)
        deliver(to: entry, unique: 42, firstArgument: argument, payload: payload)
        let request = try #require(entry.takeRequest())
        #expect(request.count == inHeader + 16 + payload.count)
        #expect(request.loadUnaligned(as: fuse_in_header.self).unique == 42)
        #expect(Array(request[inHeader ..< inHeader + 16]) == argument)
        #expect(request.baseAddress! + inHeader + 16 == entry.payload)
        #expect(Array(request[(inHeader + 16)...]) == payload)
        #expect(entry.unique.load(ordering: .relaxed) == 42 && entry.commitID == 42)
    }

    @Test("a request whose sizes do not add up is refused", arguments: [0, 40, 40 + 129 + 3])
    func inconsistentSizes(claimedLength: Int) throws {
        let entry = try #require(RingEntry(index: 0, payloadBytes: 1 << 20))
        deliver(to: entry, unique: 9, firstArgument: [], payload: [1, 2, 3], claimedLength: claimedLength)
        #expect(entry.takeRequest() == nil)
    }

    @Test("a reply goes into the payload with its size, and nothing of the request or an earlier reply stays")
    func replyLaidOutAndResidueWiped() throws {
        let entry = try #require(RingEntry(index: 0, payloadBytes: 1 << 20))
        let secret = Array(repeating: UInt8(0xAB), count: 5000)
        deliver(to: entry, unique: 5, firstArgument: [], payload: secret)
        _ = try #require(entry.takeRequest())
        reply(entry, unique: 5, Array("short".utf8))
        #expect(entry.header.pointee.ring_ent_in_out.payload_sz == 5)
        let out = UnsafeRawPointer(entry.header).loadUnaligned(as: fuse_out_header.self)
        #expect(out.unique == 5 && out.error == 0 && Int(out.len) == MemoryLayout<fuse_out_header>.size + 5)
        #expect(Array(UnsafeRawBufferPointer(start: entry.payload, count: 5)) == Array("short".utf8))
        #expect(UnsafeRawBufferPointer(start: entry.payload + 5, count: 4995).allSatisfy { $0 == 0 })
        // The next request is shorter than that reply: the rest of the reply goes too.
        deliver(to: entry, unique: 6, firstArgument: [], payload: [1, 2])
        _ = try #require(entry.takeRequest())
        #expect(UnsafeRawBufferPointer(start: entry.payload + 2, count: 3).allSatisfy { $0 == 0 })
        reply(entry, unique: 6, Array("reply".utf8))
        entry.wipeReply()
        #expect(UnsafeRawBufferPointer(start: entry.payload, count: 5000).allSatisfy { $0 == 0 })
    }

    @Test("replies to reads, listings, xattr and link reads hold plaintext; others hold attributes",
          arguments: [(FUSE_READ, true), (FUSE_READDIRPLUS, true), (FUSE_READLINK, true), (FUSE_GETXATTR, true),
                      (FUSE_LOOKUP, false), (FUSE_GETATTR, false), (FUSE_WRITE, false)])
    func plaintextReplies(opcode: fuse_opcode, plaintext: Bool) throws {
        let entry = try #require(RingEntry(index: 0, payloadBytes: 4096))
        deliver(to: entry, unique: 8, firstArgument: [], payload: [], opcode: opcode)
        _ = try #require(entry.takeRequest())
        reply(entry, unique: 8, [1, 2, 3])
        #expect(entry.holdsPlaintextReply == plaintext)
        entry.wipeReply()
        #expect(!entry.holdsPlaintextReply)
    }

    @Test("a reply larger than the payload buffer becomes EIO")
    func oversizedReply() throws {
        let entry = try #require(RingEntry(index: 0, payloadBytes: 4096))
        deliver(to: entry, unique: 3, firstArgument: [], payload: [])
        _ = try #require(entry.takeRequest())
        reply(entry, unique: 3, Array(repeating: 1, count: 4097))
        #expect(UnsafeRawPointer(entry.header).loadUnaligned(as: fuse_out_header.self).error == -EIO)
        #expect(entry.header.pointee.ring_ent_in_out.payload_sz == 0)
    }
}
