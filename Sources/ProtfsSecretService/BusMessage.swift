import CSystemd
import Glibc
import ProtfsCrypto

/// Reads the arguments of an incoming sd-bus message in order. Every mismatch (a wrong type,
/// a missing argument) is `InvalidArgs`, never a crash: callers check the signature first,
/// and sd-bus checks every read against the message.
struct BusReader {
    let message: OpaquePointer

    var signature: String { sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "" }

    func requireSignature(_ expected: String) throws(BusError) {
        guard signature == expected else {
            throw .invalidArguments("expected arguments of type '\(expected)', got '\(signature)'")
        }
    }

    func string(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(type.asciiValue!), &value) >= 0, let value else { throw .malformed }
        return String(cString: value)
    }

    func bool() throws(BusError) -> Bool {
        var value: Int32 = 0
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &value) >= 0 else { throw .malformed }
        return value != 0
    }

    /// An `ay` in place (valid until the message is released).
    func bytes() throws(BusError) -> UnsafeRawBufferPointer {
        var pointer: UnsafeRawPointer?
        var count = 0
        guard sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &count) >= 0 else { throw .malformed }
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    func objectPaths() throws(BusError) -> [String] {
        try enter("a", "o")
        var paths: [String] = []
        while !atEnd { paths.append(try string("o")) }
        try exit()
        return paths
    }

    /// `a{ss}`; a repeated key keeps its last value.
    func stringMap() throws(BusError) -> [String: String] {
        try enter("a", "{ss}")
        var map: [String: String] = [:]
        while try enterIfMore("e", "ss") {
            let key = try string()
            map[key] = try string()
            try exit()
        }
        try exit()
        return map
    }

    var atEnd: Bool { sd_bus_message_at_end(message, 0) > 0 }

    func enter(_ type: Character, _ contents: String) throws(BusError) {
        guard sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents) > 0 else { throw .malformed }
    }

    /// Enters the next element of the current array; false at its end.
    func enterIfMore(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let result = sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents)
        guard result >= 0 else { throw .malformed }
        return result > 0
    }

    func exit() throws(BusError) {
        guard sd_bus_message_exit_container(message) >= 0 else { throw .malformed }
    }

    /// The contents signature of the variant that comes next.
    func variantContents() throws(BusError) -> String {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")), let contents else {
            throw .malformed
        }
        return String(cString: contents)
    }

    func skip(_ types: String) throws(BusError) {
        guard sd_bus_message_skip(message, types) >= 0 else { throw .malformed }
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
        open("a", "o")
        for path in paths { objectPath(path) }
        close()
    }

    func stringMap(_ map: [String: String]) {
        open("a", "{ss}")
        for (key, value) in map.sorted(by: { $0.key < $1.key }) {
            open("e", "ss")
            string(key)
            string(value)
            close()
        }
        close()
    }

    func open(_ type: Character, _ contents: String) {
        check(sd_bus_message_open_container(message, CChar(type.asciiValue!), contents))
    }

    func close() { check(sd_bus_message_close_container(message)) }

    /// Sends it; false when building or sending failed (the peer may have gone).
    @discardableResult
    func send() -> Bool {
        guard !failed, let bus = sd_bus_message_get_bus(message) else { return false }
        return sd_bus_send(bus, message, nil) >= 0
    }
}
