import CFuse
import CProtfsUring
import Glibc
import ProtfsSystem
import Synchronization

/// One entry of a ring queue: the two buffers the kernel writes a request into and reads
/// the reply from, and the request it holds.
///
/// Laid out as one mapping: the header buffer (`fuse_uring_req_header`: the request's
/// `fuse_in_header`, its first argument, its payload size) at the start, the payload buffer
/// one page in. libfuse wants a request as `/dev/fuse` delivers it, header, arguments and
/// payload in one piece, so the header and first argument are copied into the free space
/// right before the payload, and a WRITE's data is used where the kernel put it. The memory
/// is locked plaintext memory (names, written and read data pass through it), wiped as soon
/// as the kernel is done with what it holds.
final class RingEntry: @unchecked Sendable {
    static let headerBytes = MemoryLayout<protfs_fuse_uring_req_header>.size
    /// Where the payload starts: room before it for the header buffer and for the rebuilt
    /// request's header and first argument.
    static let payloadOffset = 4096
    static let inHeaderBytes = MemoryLayout<fuse_in_header>.size
    static let firstArgumentBytes = 128

    let index: Int
    let memory: UnsafeMutableRawBufferPointer
    let payloadBytes: Int
    /// The two buffers as the kernel is given them at REGISTER.
    let buffers: UnsafeMutablePointer<iovec>
    /// The `unique` of the request this entry holds, 0 when none (a reply goes to the entry
    /// whose request it answers, whichever thread sends it).
    let unique = Atomic<UInt64>(0)

    // The queue thread's own.
    /// The id the reply is committed with.
    var commitID: UInt64 = 0
    /// Payload bytes the kernel wrote (the request's) and that the reply wrote.
    var requestBytes = 0
    var replyBytes = 0
    /// Whether the request's reply carries plaintext (file contents, names, xattrs, link
    /// targets), which must not stay once the kernel has it; other replies carry attributes.
    var repliesWithPlaintext = false
    /// Whether the kernel took the entry's buffers (its first request came).
    var registered = false
    /// Whether the kernel gave the entry up (unmounted, aborted, refused).
    var ended = false

    /// The requests whose replies carry plaintext.
    static let plaintextReplies = Set([FUSE_READ, FUSE_READDIR, FUSE_READDIRPLUS, FUSE_READLINK, FUSE_GETXATTR,
                                       FUSE_LISTXATTR].map(\.rawValue))

    /// Whether the entry holds a reply with plaintext the kernel may have taken already.
    var holdsPlaintextReply: Bool { repliesWithPlaintext && replyBytes > 0 }

    init?(index: Int, payloadBytes: Int) {
        guard let memory = PlaintextMemory.map(byteCount: Self.payloadOffset + payloadBytes) else { return nil }
        self.index = index
        self.memory = memory
        self.payloadBytes = payloadBytes
        buffers = .allocate(capacity: 2)
        buffers[0] = iovec(iov_base: memory.baseAddress, iov_len: Self.headerBytes)
        buffers[1] = iovec(iov_base: memory.baseAddress! + Self.payloadOffset, iov_len: payloadBytes)
    }

    deinit {
        PlaintextMemory.wipe(memory)
        PlaintextMemory.unmap(memory)
        buffers.deallocate()
    }

    var header: UnsafeMutablePointer<protfs_fuse_uring_req_header> {
        memory.baseAddress!.assumingMemoryBound(to: protfs_fuse_uring_req_header.self)
    }

    var payload: UnsafeMutableRawPointer { memory.baseAddress! + Self.payloadOffset }

    /// The request the kernel just delivered, rebuilt in one piece before the payload as
    /// libfuse expects it; nil if its sizes do not add up.
    func takeRequest() -> UnsafeMutableRawBufferPointer? {
        let inHeader = UnsafeRawPointer(header).loadUnaligned(as: fuse_in_header.self)
        let ringHeader = header.pointee.ring_ent_in_out
        let payloadCount = Int(ringHeader.payload_sz)
        let argumentCount = Int(inHeader.len) - Self.inHeaderBytes - payloadCount
        // What the kernel's payload wrote over of an earlier reply is gone; the rest goes now.
        wipePayload(from: min(payloadCount, payloadBytes), to: replyBytes)
        replyBytes = 0
        requestBytes = min(payloadCount, payloadBytes)
        guard payloadCount <= payloadBytes, (0...Self.firstArgumentBytes).contains(argumentCount) else { return nil }
        commitID = ringHeader.commit_id
        repliesWithPlaintext = Self.plaintextReplies.contains(inHeader.opcode)
        unique.store(inHeader.unique, ordering: .releasing)
        let prefix = Self.inHeaderBytes + argumentCount
        let start = payload - prefix
        start.copyMemory(from: UnsafeRawPointer(header), byteCount: Self.inHeaderBytes)
        withUnsafeMutablePointer(to: &header.pointee.op_in) { firstArgument in
            (start + Self.inHeaderBytes).copyMemory(from: UnsafeRawPointer(firstArgument), byteCount: argumentCount)
        }
        return UnsafeMutableRawBufferPointer(start: start, count: prefix + payloadCount)
    }

    /// Wipes the copy of the header and first argument in front of the payload.
    func wipeRebuiltHeader() {
        let prefix = Self.inHeaderBytes + Self.firstArgumentBytes
        PlaintextMemory.wipe(UnsafeMutableRawBufferPointer(start: payload - prefix, count: prefix))
    }

    /// Writes libfuse's reply (`iov[0]` the `fuse_out_header`, the rest its payload) for the
    /// kernel to take at the next commit; a reply too large for the buffer becomes EIO.
    func stageReply(_ iov: UnsafePointer<iovec>, _ count: Int) {
        var out = iov[0].iov_base!.loadUnaligned(as: fuse_out_header.self)
        var written = 0
        for part in UnsafeBufferPointer(start: iov, count: count).dropFirst() where part.iov_len > 0 {
            guard written + part.iov_len <= payloadBytes else {
                written = 0
                out.error = -EIO
                break
            }
            (payload + written).copyMemory(from: part.iov_base!, byteCount: part.iov_len)
            written += part.iov_len
        }
        out.len = UInt32(MemoryLayout<fuse_out_header>.size + written)
        wipePayload(from: written, to: requestBytes)
        requestBytes = 0
        replyBytes = written
        PlaintextMemory.wipe(UnsafeMutableRawBufferPointer(start: header, count: Self.headerBytes))
        UnsafeMutableRawPointer(header).storeBytes(of: out, as: fuse_out_header.self)
        header.pointee.ring_ent_in_out.payload_sz = UInt32(written)
    }

    /// A reply for a request that could not be handled (its sizes did not add up).
    func stageError(_ error: Int32, unique requestUnique: UInt64) {
        var out = fuse_out_header(len: UInt32(MemoryLayout<fuse_out_header>.size), error: -error, unique: requestUnique)
        withUnsafeMutablePointer(to: &out) { header in
            var part = iovec(iov_base: UnsafeMutableRawPointer(header), iov_len: MemoryLayout<fuse_out_header>.size)
            stageReply(&part, 1)
        }
    }

    /// Wipes the reply once the kernel has taken it (called only while the kernel cannot
    /// be writing into the entry: between this queue thread's calls into the ring).
    func wipeReply() {
        wipePayload(from: 0, to: replyBytes)
        replyBytes = 0
    }

    private func wipePayload(from start: Int, to end: Int) {
        guard end > start else { return }
        PlaintextMemory.wipe(UnsafeMutableRawBufferPointer(start: payload + start, count: end - start))
    }
}
