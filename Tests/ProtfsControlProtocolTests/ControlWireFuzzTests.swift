import Foundation
import ProtfsTestSupport
import Testing
@testable import ProtfsControlProtocol
import ProtfsCrypto

/// The control protocol's frame decoder (`ControlWire.readRequest` / `readReply`) on every
/// single-bit flip and every length-field extreme of valid messages, and every
/// JSON-significant byte at every place of their headers: exhaustive where ControlWireTests'
/// seeded loop samples, and held to more than not crashing. Each input must give a
/// `ControlWireError` that says something, or a message with the secrets its kind needs, each
/// within the limit; never a crash or a hang (the source never blocks, so a hang would be
/// the decoder's own).
@Suite("Control frames under every small mutation", .timeLimit(.minutes(2)))
struct ControlWireFuzzTests {
    static let requests = ControlWireTests.requests
    static let replies = ControlWireTests.replies

    // MARK: requests

    @Test("every single-bit flip of a request")
    func requestBitFlips() throws {
        for message in try Self.requests.map(Self.encoded) {
            for bit in 0..<(message.count * 8) {
                var flipped = message
                flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                #expect(Self.isWellFormed(Self.decodeRequest(flipped)), "bit \(bit) of \(message.count) bytes")
            }
        }
    }

    @Test("every length field of a request at its extremes")
    func requestLengthExtremes() throws {
        let extremes: [UInt32] = [0, 1, 2, 4095, 4096, 4097, 65535, 65536, 65537, 0x7FFF_FFFF, 0x8000_0000, .max]
        for (request, secrets) in Self.requests {
            let message = try Self.encoded((request, secrets))
            // The header's length, then each secret's, with the lengths each field allows.
            let allowed = [1...ControlLimits.maximumHeaderLength] + request.secretLengths
            for (offset, range) in zip(Self.lengthFieldOffsets(of: message, secrets: secrets.count), allowed) {
                for value in extremes {
                    var changed = message
                    changed.replaceSubrange(offset..<(offset + 4), with: Self.bigEndian(value))
                    let outcome = Self.decodeRequest(changed)
                    #expect(Self.isWellFormed(outcome), "length \(value) at \(offset)")
                    if !range.contains(Int(value)) {
                        guard case .failure(.lengthOutOfRange) = outcome else {
                            Issue.record("length \(value) at \(offset) gave \(outcome)")
                            continue
                        }
                    }
                }
            }
        }
    }

    @Test("every JSON-significant byte at every place of a request header, and deep nesting")
    func requestHeaderSubstitutions() throws {
        let significant = Array("{}[]\",:\\0123456789.eE+-tfnu \u{7F}".utf8) + [0x00, 0x80, 0xC3, 0xFF]
        for message in try Self.requests.map(Self.encoded) {
            for at in 8..<(8 + Int(Self.headerLength(of: message))) {
                for byte in significant where byte != message[at] {
                    var changed = message
                    changed[at] = byte
                    #expect(Self.isWellFormed(Self.decodeRequest(changed)), "byte \(byte) at \(at)")
                }
            }
        }
        for depth in [9, 64, 30_000] {
            let nested = Array(("{\"request\":\"status\",\"x\":" + String(repeating: "[", count: depth)
                                + String(repeating: "]", count: depth) + "}").utf8)
            let outcome = Self.decodeRequest(ControlWire.magic + ControlWire.frame(nested))
            guard case .failure(.malformed) = outcome else {
                Issue.record("nesting \(depth) gave \(outcome)")
                continue
            }
        }
    }

    // MARK: replies

    @Test("every truncation and single-bit flip of a reply")
    func replyMutations() throws {
        for reply in Self.replies {
            let frame = try ControlWire.encoded(reply)
            for length in 0..<frame.count {
                let outcome = Self.decodeReply(Array(frame[0..<length]))
                #expect(length == 0 ? outcome == .success(nil) : outcome == .failure(.truncated), "reply cut to \(length)")
            }
            for bit in 0..<(frame.count * 8) {
                var flipped = frame
                flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                switch Self.decodeReply(flipped) {
                case .success(let decoded): #expect(decoded != nil)
                case .failure(let error): #expect(!error.description.isEmpty)
                }
            }
        }
    }

    // MARK: plumbing

    static func encoded(_ message: (ControlRequest, [[UInt8]])) throws -> [UInt8] {
        try encodedRequest(message.0, secrets: message.1)
    }

    /// The decoded request and its secrets' lengths, or the error.
    static func decodeRequest(_ bytes: [UInt8]) -> Result<RequestSummary, ControlWireError> {
        var source = MemorySource(bytes)
        return Result { () throws(ControlWireError) in
            let message = try ControlWire.readRequest(from: &source)
            return RequestSummary(request: message.request, secretLengths: message.secrets.map(\.count))
        }
    }

    static func decodeReply(_ bytes: [UInt8]) -> Result<ControlReply?, ControlWireError> {
        var source = MemorySource(bytes)
        return Result { () throws(ControlWireError) in try ControlWire.readReply(from: &source) }
    }

    /// A decoded request must carry the secrets its kind needs, each within its kind's limits; an
    /// error must say something.
    static func isWellFormed(_ outcome: Result<RequestSummary, ControlWireError>) -> Bool {
        switch outcome {
        case .success(let summary):
            return summary.secretLengths.count == summary.request.secretCount
                && zip(summary.secretLengths, summary.request.secretLengths).allSatisfy { $1.contains($0) }
                && ControlRequest.problem(inComponents: summary.components) == nil
        case .failure(let error):
            return !error.description.isEmpty
        }
    }

    static func headerLength(of message: [UInt8]) -> UInt32 {
        message[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Offsets of the header length and of each secret's length.
    static func lengthFieldOffsets(of message: [UInt8], secrets: Int) -> [Int] {
        var offsets = [4]
        var next = 8 + Int(headerLength(of: message))
        for _ in 0..<secrets {
            offsets.append(next)
            next += 4 + Int(headerLength(of: Array(message[(next - 4)..<(next + 4)])))
        }
        return offsets
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

struct RequestSummary: Equatable {
    let request: ControlRequest
    let secretLengths: [Int]

    var components: [[UInt8]] {
        if case .backingPath(let components) = request { return components }
        return []
    }
}
