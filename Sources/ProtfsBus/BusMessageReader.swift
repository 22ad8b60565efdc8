import CSystemd
import Glibc

/// Reads the arguments of an sd-bus message (a call, a reply or a signal) in order, for both
/// sides of the project's D-Bus: the follower's calls and signals, the Secret Service
/// provider's incoming calls. Valid only while the message is, so callers copy out what they
/// keep. Every mismatch (a wrong type, a missing argument, a container that does not close)
/// is a `Failure` made by the edge from the errno sd-bus gave (`EBADMSG` for a missing
/// argument): a peer's malformed message is an error there, never a crash.
public struct BusMessageReader<Failure: Error> {
    public let message: OpaquePointer
    private let failure: (Int32) -> Failure

    /// `failure` turns a positive errno into the edge's own error.
    public init(_ message: OpaquePointer, failure: @escaping (Int32) -> Failure) {
        self.message = message
        self.failure = failure
    }

    /// The whole message's signature.
    public var signature: String { sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "" }

    /// Whether the current container (or the message) has no more arguments.
    public var atEnd: Bool { sd_bus_message_at_end(message, 0) > 0 }

    /// A string of D-Bus type `type`: `s`, `o` (an object path) or `g` (a signature).
    public func string(_ type: Character = "s") throws(Failure) -> String {
        var value: UnsafePointer<CChar>?
        try read(type, &value)
        guard let value else { throw failure(EBADMSG) }
        return String(cString: value)
    }

    public func objectPath() throws(Failure) -> String { try string("o") }

    public func bool() throws(Failure) -> Bool {
        var value: Int32 = 0
        try read("b", &value)
        return value != 0
    }

    /// An `ay` in place (valid until the message is released).
    public func bytes() throws(Failure) -> UnsafeRawBufferPointer {
        var pointer: UnsafeRawPointer?
        var count = 0
        try check(sd_bus_message_read_array(message, CChar(UInt8(ascii: "y")), &pointer, &count))
        return UnsafeRawBufferPointer(start: pointer, count: count)
    }

    /// A descriptor the message carries, duplicated (close-on-exec) so that it outlives it.
    public func fileDescriptor() throws(Failure) -> Int32 {
        var fd: Int32 = -1
        try read("h", &fd)
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw failure(errno) }
        return copy
    }

    public func objectPaths() throws(Failure) -> [String] { try array("o") { () throws(Failure) in try string("o") } }

    public func strings() throws(Failure) -> [String] { try array("s") { () throws(Failure) in try string() } }

    /// `a{ss}`; a repeated key keeps its last value.
    public func stringMap() throws(Failure) -> [String: String] {
        var map: [String: String] = [:]
        try enter("a", "{ss}")
        while try enterIfMore("e", "ss") {
            let key = try string()
            map[key] = try string()
            try exit()
        }
        try exit()
        return map
    }

    /// The boolean `name` of an `a{sv}` (PropertiesChanged's changed values) when it is among
    /// them; other values are skipped.
    public func booleanProperty(_ name: String) throws(Failure) -> Bool? {
        var found: Bool?
        try enter("a", "{sv}")
        while try enterIfMore("e", "sv") {
            if try string() == name {
                found = try variant("b") { () throws(Failure) -> Bool in try bool() }
            } else {
                try skip("v")
            }
            try exit()
        }
        try exit()
        return found
    }

    /// A variant holding a value of `contents`, read by `body`.
    public func variant<T>(_ contents: String, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        try container("v", contents, body)
    }

    /// A structure of `contents` (such as `so`), read by `body`.
    public func structure<T>(_ contents: String, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        try container("r", contents, body)
    }

    /// The contents signature of the variant that comes next.
    public func variantContents() throws(Failure) -> String {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let status = sd_bus_message_peek_type(message, &type, &contents)
        try check(status)
        guard status > 0, type == CChar(UInt8(ascii: "v")), let contents else { throw failure(EBADMSG) }
        return String(cString: contents)
    }

    public func enter(_ type: Character, _ contents: String) throws(Failure) {
        guard try enterIfMore(type, contents) else { throw failure(EBADMSG) }
    }

    /// Enters the next container (the next element of the current array); false at its end.
    public func enterIfMore(_ type: Character, _ contents: String) throws(Failure) -> Bool {
        let status = sd_bus_message_enter_container(message, CChar(type.asciiValue!), contents)
        try check(status)
        return status > 0
    }

    public func exit() throws(Failure) { try check(sd_bus_message_exit_container(message)) }

    /// Skips arguments of the signature `types`.
    public func skip(_ types: String) throws(Failure) { try check(sd_bus_message_skip(message, types)) }

    private func array(_ element: String, _ read: () throws(Failure) -> String) throws(Failure) -> [String] {
        var values: [String] = []
        try enter("a", element)
        while !atEnd { values.append(try read()) }
        try exit()
        return values
    }

    private func container<T>(_ type: Character, _ contents: String, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        try enter(type, contents)
        let value = try body()
        try exit()
        return value
    }

    private func read<T>(_ type: Character, _ value: inout T) throws(Failure) {
        let status = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, CChar(type.asciiValue!), $0) }
        try check(status)
        // 0: no more arguments where one was expected (a peer that sent less).
        guard status > 0 else { throw failure(EBADMSG) }
    }

    private func check(_ status: Int32) throws(Failure) {
        guard status >= 0 else { throw failure(-status) }
    }
}
