import CSystemd
import Glibc
import ProtfsBus
import Testing

/// The shared reader over messages built here, without a bus daemon: a connection on one end
/// of a socket pair (never read) lets sd-bus make messages, which are sealed and rewound as
/// if they had arrived.
@Suite("bus message reader")
struct BusMessageReaderTests {
    struct Failure: Error, Equatable { let errno: Int32 }

    /// A sealed method call whose arguments `append` wrote, read by `body`.
    static func withMessage(_ append: (OpaquePointer) -> Void, _ body: (BusMessageReader<Failure>) throws -> Void) throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        var bus: OpaquePointer?
        try #require(sd_bus_new(&bus) >= 0)
        defer { sd_bus_close_unref(bus) }  // closes pair[0]
        try #require(sd_bus_set_fd(bus, pair[0], pair[0]) >= 0 && sd_bus_start(bus) >= 0)
        var message: OpaquePointer?
        try #require(sd_bus_message_new_method_call(bus, &message, "org.example.Peer", "/org/example", "org.example.Test", "Call") >= 0)
        let sealed = try #require(message)
        defer { sd_bus_message_unref(sealed) }
        append(sealed)
        try #require(sd_bus_message_seal(sealed, 1, 0) >= 0 && sd_bus_message_rewind(sealed, 1) >= 0)
        try body(BusMessageReader(sealed) { Failure(errno: $0) })
    }

    static func append(_ message: OpaquePointer, _ type: Character, _ text: String) {
        _ = text.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) }
    }

    static func append(_ message: OpaquePointer, bool: Bool) {
        var bit: Int32 = bool ? 1 : 0
        _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &bit)
    }

    static func open(_ message: OpaquePointer, _ type: Character, _ contents: String, _ body: () -> Void) {
        _ = sd_bus_message_open_container(message, CChar(type.asciiValue!), contents)
        body()
        _ = sd_bus_message_close_container(message)
    }

    @Test("strings, paths, booleans, bytes, arrays, maps, variants and structures read back in order")
    func readsWhatWasWritten() throws {
        try Self.withMessage({ m in
            Self.append(m, "s", "text")
            Self.append(m, "o", "/a/path")
            Self.append(m, bool: true)
            _ = "xyz".withCString { sd_bus_message_append_array(m, CChar(UInt8(ascii: "y")), $0, 3) }
            Self.open(m, "a", "o") { Self.append(m, "o", "/one"); Self.append(m, "o", "/two") }
            Self.open(m, "a", "{ss}") {
                for (key, value) in [("k", "1"), ("j", "2"), ("k", "3")] {
                    Self.open(m, "e", "ss") { Self.append(m, "s", key); Self.append(m, "s", value) }
                }
            }
            Self.open(m, "v", "(so)") { Self.open(m, "r", "so") { Self.append(m, "s", "seat"); Self.append(m, "o", "/s") } }
            Self.open(m, "a", "{sv}") {
                Self.open(m, "e", "sv") { Self.append(m, "s", "Other"); Self.open(m, "v", "s") { Self.append(m, "s", "x") } }
                Self.open(m, "e", "sv") { Self.append(m, "s", "LockedHint"); Self.open(m, "v", "b") { Self.append(m, bool: true) } }
            }
            Self.open(m, "a", "s") { Self.append(m, "s", "gone") }
        }) { reader throws in
            #expect(reader.signature == "sobayaoa{ss}va{sv}as")
            #expect(try reader.string() == "text")
            #expect(try reader.objectPath() == "/a/path")
            #expect(try reader.bool())
            #expect(Array(try reader.bytes()) == Array("xyz".utf8))
            #expect(try reader.objectPaths() == ["/one", "/two"])
            #expect(try reader.stringMap() == ["k": "3", "j": "2"])
            #expect(try reader.variantContents() == "(so)")
            let seat = try reader.variant("(so)") { () throws(Failure) -> String in
                try reader.structure("so") { () throws(Failure) -> String in try reader.string() + (try reader.objectPath()) }
            }
            #expect(seat == "seat/s")
            #expect(try reader.booleanProperty("LockedHint") == true)
            #expect(try reader.strings() == ["gone"])
            #expect(reader.atEnd)
        }
    }

    @Test("a wrong type, a missing argument or a missing variant is the edge's failure, never a crash")
    func mismatchesFail() throws {
        try Self.withMessage({ m in Self.append(m, "s", "text") }) { reader throws in
            #expect(throws: Failure(errno: ENXIO)) { try reader.bool() }
            #expect(throws: Failure.self) { try reader.variantContents() }
            #expect(throws: Failure.self) { try reader.stringMap() }
            #expect(try reader.string() == "text")
            #expect(throws: Failure(errno: ENXIO)) { try reader.string() }
            #expect(throws: Failure(errno: ENXIO)) { try reader.enter("a", "s") }
        }
    }
}
