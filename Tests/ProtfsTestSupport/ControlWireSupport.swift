import ProtfsControlProtocol
import ProtfsCrypto

/// Whole control messages in memory, for the decoder tests.
public struct MemorySource: ControlByteSource {
    public let bytes: [UInt8]
    public var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        guard buffer.count > 0 else { return }
        guard offset < bytes.count else { throw .closed }
        guard bytes.count - offset >= buffer.count else {
            offset = bytes.count
            throw .truncated
        }
        bytes[offset..<offset + buffer.count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += buffer.count
    }
}

public struct MemorySink: ControlByteSink {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func send(_ buffer: UnsafeRawBufferPointer) throws(ControlWireError) {
        bytes.append(contentsOf: buffer)
    }
}

/// `bytes` in locked memory, as a control request carries a secret.
public func secret(_ bytes: [UInt8]) -> SecureBuffer {
    bytes.withUnsafeBytes { SecureBuffer(copying: $0) }
}

/// The encoded form of a request, as protfsctl would send it.
public func encodedRequest(_ request: ControlRequest, secrets: [[UInt8]] = []) throws -> [UInt8] {
    var sink = MemorySink()
    try ControlWire.write(request, secrets: secrets.map(secret), to: &sink)
    return sink.bytes
}
