import CSystemd
import Glibc
import ProtfsBus
import ProtfsCrypto

/// The provider's reader of incoming calls. Every mismatch (a wrong type, a missing
/// argument) is `InvalidArgs`, never a crash: callers check the signature first, and sd-bus
/// checks every read against the message.
typealias BusReader = BusMessageReader<BusErrorReply>

extension BusMessageReader where Failure == BusErrorReply {
    init(message: OpaquePointer) { self.init(message) { _ in .malformed } }

    func requireSignature(_ expected: String) throws(BusErrorReply) {
        guard signature == expected else {
            throw .invalidArguments("expected arguments of type '\(expected)', got '\(signature)'")
        }
    }
}

/// Builds an outgoing sd-bus message; the first failure is kept and reported by `send`.
final class BusWriter {
    let message: OpaquePointer
    private var failed = false

    init(_ message: OpaquePointer) { self.message = message }
    deinit { sd_bus_message_unref(message) }

    private func check(_ result: Int32) { if result < 0 { failed = true } }

    func string(_ value: String, type: Character = "s") {
        value.withCString { check(sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0)) }
    }

    func objectPath(_ value: String) { string(value, type: "o") }

    func bool(_ value: Bool) {
        var bit: Int32 = value ? 1 : 0
        check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &bit))
    }

    func uint64(_ value: UInt64) {
        var number = value
        check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &number))
    }

    func bytes(_ bytes: UnsafeRawBufferPointer) {
        check(sd_bus_message_append_array(message, CChar(UInt8(ascii: "y")), bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!,
                                          bytes.count))
    }

    func objectPaths(_ paths: [String]) {
        openContainer("a", "o")
        for path in paths { objectPath(path) }
        closeContainer()
    }

    func stringMap(_ map: [String: String]) {
        openContainer("a", "{ss}")
        for (key, value) in map.sorted(by: { $0.key < $1.key }) {
            openContainer("e", "ss")
            string(key)
            string(value)
            closeContainer()
        }
        closeContainer()
    }

    /// Starts a container (`a` array, `e` dictionary entry, `r` struct, `v` variant) of
    /// `contents`; every one is ended by `closeContainer`.
    func openContainer(_ type: Character, _ contents: String) {
        check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents))
    }

    func closeContainer() { check(sd_bus_message_close_container(message)) }

    /// Sends it; false when building or sending failed (the peer may have gone).
    @discardableResult
    func send() -> Bool {
        guard !failed, let bus = sd_bus_message_get_bus(message) else { return false }
        return sd_bus_send(bus, message, nil) >= 0
    }
}
