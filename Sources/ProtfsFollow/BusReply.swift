import CSystemd
import Glibc

/// Reads the arguments of a message (a reply or a signal) in order; valid only while the
/// message is, so callers copy out what they keep.
struct BusReply {
    private let message: OpaquePointer
    private let what: String

    init(_ message: OpaquePointer, what: String) {
        self.message = message
        self.what = what
    }

    func string() throws(BusError) -> String { String(cString: try pointer("s")) }
    func objectPath() throws(BusError) -> String { String(cString: try pointer("o")) }

    func bool() throws(BusError) -> Bool {
        var value: Int32 = 0
        try read("b", &value)
        return value != 0
    }

    /// A descriptor the message carries, duplicated (close-on-exec) so that it outlives it.
    func fileDescriptor() throws(BusError) -> Int32 {
        var fd: Int32 = -1
        try read("h", &fd)
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw BusError("cannot keep the descriptor of \(what)", errno: errno) }
        return copy
    }

    /// A variant holding a value of `contents` (a property's value), read by `body`.
    func variant<T>(_ contents: String, _ body: () throws(BusError) -> T) throws(BusError) -> T {
        try container("v", contents, body)
    }

    /// A structure of `contents` (`(so)`), read by `body`.
    func structure<T>(_ contents: String, _ body: () throws(BusError) -> T) throws(BusError) -> T {
        try container("r", contents, body)
    }

    /// The `a{sv}` of PropertiesChanged: the boolean `name` when it is among them.
    func booleanProperty(_ name: String) throws(BusError) -> Bool? {
        var found: Bool?
        try enter("a", "{sv}")
        while try enterIfAny("e", "sv") {
            if try string() == name {
                found = try variant("b") { () throws(BusError) -> Bool in try bool() }
            } else {
                try check(sd_bus_message_skip(message, "v"))
            }
            try check(sd_bus_message_exit_container(message))
        }
        try check(sd_bus_message_exit_container(message))
        return found
    }

    /// The `as` of PropertiesChanged's invalidated names.
    func strings() throws(BusError) -> [String] {
        var result: [String] = []
        try enter("a", "s")
        while sd_bus_message_at_end(message, 0) == 0 { result.append(try string()) }
        try check(sd_bus_message_exit_container(message))
        return result
    }

    private func container<T>(_ type: Character, _ contents: String, _ body: () throws(BusError) -> T) throws(BusError) -> T {
        try enter(type, contents)
        let value = try body()
        try check(sd_bus_message_exit_container(message))
        return value
    }

    private func enter(_ type: Character, _ contents: String) throws(BusError) {
        try check(sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents))
    }

    private func enterIfAny(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        let status = sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents)
        try check(status)
        return status > 0
    }

    private func pointer(_ type: Character) throws(BusError) -> UnsafePointer<CChar> {
        var value: UnsafePointer<CChar>?
        try read(type, &value)
        guard let value else { throw BusError("\(what) carried no value", errno: EBADMSG) }
        return value
    }

    private func read<T>(_ type: Character, _ value: inout T) throws(BusError) {
        let status = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, CChar(type.asciiValue!), $0) }
        try check(status)
        // 0: no more arguments, where one was expected (a peer that sent less).
        guard status > 0 else { throw BusError("\(what) carried fewer values than expected", errno: EBADMSG) }
    }

    private func check(_ status: Int32) throws(BusError) {
        guard status >= 0 else { throw BusError("\(what) did not have the expected form", errno: status) }
    }
}
