import FoundationEssentials
import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// Where the bytes of a message come from: a socket with a deadline, or memory in tests.
public protocol ControlByteSource {
    /// Fills `buffer` completely, or throws: `.closed` only when the stream ended before
    /// its first byte.
    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError)
}

/// Where the bytes of a message go.
public protocol ControlByteSink {
    mutating func send(_ bytes: UnsafeRawBufferPointer) throws(ControlWireError)
}

/// Why a message could not be read or written.
public enum ControlWireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer closed the connection where a message could have started.
    case closed
    /// The peer closed the connection in the middle of a message.
    case truncated
    case timedOut
    case badMagic
    case lengthOutOfRange(field: String, length: UInt32, range: ClosedRange<Int>)
    case malformed(String)
    case system(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .closed: "the connection was closed"
        case .truncated: "the connection was closed in the middle of a message"
        case .timedOut: "the message was not complete within \(ControlLimits.requestTimeout.secondsRoundedUp) s"
        case .badMagic: "not a protfs control message of this version (protfsctl and the daemon must come from the same release)"
        case .lengthOutOfRange(let field, let length, let range): "\(field) length \(length) is outside \(range)"
        case .malformed(let reason): "malformed message: \(reason)"
        case .system(let operation, let errno): "\(operation) failed: \(String(cString: strerror(errno)))"
        }
    }
}

/// Encoding and decoding of whole messages (the format is docs/CONTROL.md's, "Messages").
public enum ControlWire {
    public static let magic: [UInt8] = [0x50, 0x46, 0x43, 0x01]

    // MARK: requests

    /// Sends the magic, the header and the secrets, each secret straight from locked memory.
    public static func write(_ request: ControlRequest, secrets: [SecureBuffer], to sink: inout some ControlByteSink) throws(ControlWireError) {
        let lengths = request.secretLengths
        precondition(secrets.count == lengths.count, "a \(request) request carries \(lengths.count) secrets")
        // Checked before the first byte goes out, so that a secret too long for the wire (a
        // caller's input) is an error and the peer never sees half a message.
        for (secret, allowed) in zip(secrets, lengths) where !allowed.contains(secret.count) {
            throw .lengthOutOfRange(field: "secret", length: UInt32(clamping: secret.count), range: allowed)
        }
        try send(magic, to: &sink)
        try send(frame(try json(request)), to: &sink)
        for secret in secrets {
            try send(secret, to: &sink)
        }
    }

    /// Reads one request; every length is checked before anything is allocated for it.
    public static func readRequest(from source: inout some ControlByteSource) throws(ControlWireError) -> ControlRequestMessage {
        guard try readBytes(magic.count, from: &source, atMessageStart: true) == magic else { throw .badMagic }
        // A backing-path request names a path of the mount in plaintext.
        var header = try readFrame(from: &source, continuing: true)
        defer { secureZero(&header) }
        let request: ControlRequest = try decode(header)
        var secrets: [SecureBuffer] = []
        for allowed in request.secretLengths {
            let field = switch request {
            case .item: "secret"
            case .backup: secrets.count + 1 == request.secretCount ? "backup passphrase" : "passcode"
            default: "passcode"
            }
            secrets.append(try readSecret(from: &source, field: field, allowed: allowed))
        }
        return ControlRequestMessage(request: request, secrets: secrets)
    }

    /// A length, then that many bytes straight into locked memory.
    private static func readSecret(from source: inout some ControlByteSource, field: String,
                                   allowed: ClosedRange<Int>) throws(ControlWireError) -> SecureBuffer {
        let length = try readLength(from: &source, field: field, allowed: allowed)
        let secret = SecureBuffer(count: length)
        if length > 0 {
            try secret.withUnsafeMutableBytes { (buffer) throws(ControlWireError) in try fillContinuing(buffer, from: &source) }
        }
        return secret
    }

    private static func send(_ secret: SecureBuffer, to sink: inout some ControlByteSink) throws(ControlWireError) {
        try send(bigEndian(UInt32(secret.count)), to: &sink)
        if secret.count > 0 {
            try secret.withUnsafeBytes { (bytes) throws(ControlWireError) in try sink.send(bytes) }
        }
    }

    // MARK: replies

    /// Sends a reply; an `item` reply's secret follows it, straight from locked memory.
    public static func write(_ reply: ControlReply, secret: SecureBuffer? = nil, to sink: inout some ControlByteSink) throws(ControlWireError) {
        precondition(reply.carriesSecret == (secret != nil), "an item reply, and only one, carries its secret")
        try send(frame(try json(reply, limit: ControlLimits.maximumReplyLength)), to: &sink)
        if let secret { try send(secret, to: &sink) }
    }

    /// The whole reply frame, for sending without blocking (watch events).
    public static func encoded(_ reply: ControlReply) throws(ControlWireError) -> [UInt8] {
        frame(try json(reply))
    }

    /// Reads one reply; nil when the daemon closed the connection between replies.
    public static func readReply(from source: inout some ControlByteSource) throws(ControlWireError) -> ControlReply? {
        try readReplyMessage(from: &source)?.reply
    }

    /// Reads one reply with the secret that follows an `item` reply.
    public static func readReplyMessage(from source: inout some ControlByteSource) throws(ControlWireError) -> ControlReplyMessage? {
        let reply: ControlReply
        do {
            reply = try decode(try readFrame(from: &source, continuing: false, limit: ControlLimits.maximumReplyLength))
        } catch .closed {
            return nil
        }
        let allowed: ClosedRange<Int>
        switch reply {
        case .item: allowed = 0...ItemLimits.maximumSecretLength
        case .itemsWithSecrets(_, let lengths):
            // The header said how long the secrets are; a frame of another length is refused.
            let total = lengths.reduce(0, +)
            allowed = total...total
        default: return ControlReplyMessage(reply: reply)
        }
        let secret = try readSecret(from: &source, field: "secret", allowed: allowed)
        return ControlReplyMessage(reply: reply, secret: secret)
    }

    // MARK: frames

    static func frame(_ json: [UInt8]) -> [UInt8] { bigEndian(UInt32(json.count)) + json }

    /// A length-prefixed frame. `continuing`: the frame is not the start of a message, so an
    /// end of stream before it is a truncation, not a clean close.
    private static func readFrame(from source: inout some ControlByteSource, continuing: Bool,
                                  limit: Int = ControlLimits.maximumHeaderLength) throws(ControlWireError) -> [UInt8] {
        let length = try readLength(from: &source, field: "header", allowed: 1...limit, atMessageStart: !continuing)
        return try readBytes(length, from: &source, atMessageStart: false)
    }

    private static func readLength(from source: inout some ControlByteSource, field: String, allowed: ClosedRange<Int>,
                                   atMessageStart: Bool = false) throws(ControlWireError) -> Int {
        let raw = try readBytes(4, from: &source, atMessageStart: atMessageStart)
        let length = raw.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard allowed.contains(Int(length)) else {
            throw .lengthOutOfRange(field: field, length: length, range: allowed)
        }
        return Int(length)
    }

    /// Inside a message, an end of stream is a truncation.
    private static func fillContinuing(_ buffer: UnsafeMutableRawBufferPointer, from source: inout some ControlByteSource) throws(ControlWireError) {
        do {
            try source.fill(buffer)
        } catch .closed {
            throw .truncated
        }
    }

    /// `count` public bytes (never a secret: those go straight into a `SecureBuffer`).
    private static func readBytes(_ count: Int, from source: inout some ControlByteSource,
                                  atMessageStart: Bool) throws(ControlWireError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(ControlWireError) in
                if atMessageStart { try source.fill(buffer) } else { try fillContinuing(buffer, from: &source) }
            }
        }.get()
        return bytes
    }

    private static func send(_ bytes: [UInt8], to sink: inout some ControlByteSink) throws(ControlWireError) {
        try bytes.withUnsafeBytes { buffer in Result { () throws(ControlWireError) in try sink.send(buffer) } }.get()
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    // MARK: JSON

    private static func json(_ value: some Encodable, limit: Int = ControlLimits.maximumHeaderLength) throws(ControlWireError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(value)) } catch { throw .malformed("cannot encode: \(error)") }
        guard bytes.count <= limit else {
            throw .lengthOutOfRange(field: "header", length: UInt32(clamping: bytes.count), range: 1...limit)
        }
        return bytes
    }

    private static func decode<T: Decodable>(_ bytes: [UInt8]) throws(ControlWireError) -> T {
        guard JSONDepth.isWithin(ControlLimits.maximumJSONDepth, bytes) else {
            throw .malformed("JSON nested deeper than \(ControlLimits.maximumJSONDepth) levels")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw .malformed(describe(error))
        } catch {
            throw .malformed("not JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        case .keyNotFound(let key, _): return "missing key \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        @unknown default: return "not a valid message"
        }
    }
}

/// Nesting depth of JSON text, counted before decoding so that a deeply nested header
/// cannot make a decoder recurse far.
enum JSONDepth {
    static func isWithin(_ limit: Int, _ bytes: [UInt8]) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x5B, 0x7B:
                depth += 1
                if depth > limit { return false }
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
        }
        return true
    }
}
