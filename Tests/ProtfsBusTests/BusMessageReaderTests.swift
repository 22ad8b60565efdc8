import CSystemd
import Glibc
import ProtfsBus
import ProtfsBusTestSupport
import Testing

/// The shared reader over messages built here, without a bus daemon (`LocalBus`).
@Suite("bus message reader")
struct BusMessageReaderTests {
    struct Failure: Error, Equatable { let errno: Int32 }

    /// A sealed method call whose arguments `append` wrote, read by `body`.
    static func withMessage(_ append: (OpaquePointer) -> Void, _ body: (BusMessageReader<Failure>) throws -> Void) throws {
        let bus = try LocalBus()
        let message = try bus.methodCall(to: "org.example.Peer", "/org/example", "org.example.Test", "Call")
        defer { sd_bus_message_unref(message) }
        append(message)
        try bus.arrive(message)
        try body(BusMessageReader(message) { Failure(errno: $0) })
    }

    @Test("strings, paths, booleans, bytes, arrays, maps, variants and structures read back in order")
    func readsWhatWasWritten() throws {
        try Self.withMessage({ m in
            MessageWriting.append(m, "s", "text")
            MessageWriting.append(m, "o", "/a/path")
            MessageWriting.append(m, bool: true)
            _ = "xyz".withCString { sd_bus_message_append_array(m, CChar(UInt8(ascii: "y")), $0, 3) }
            MessageWriting.open(m, "a", "o") { MessageWriting.append(m, "o", "/one"); MessageWriting.append(m, "o", "/two") }
            MessageWriting.open(m, "a", "{ss}") {
                for (key, value) in [("k", "1"), ("j", "2"), ("k", "3")] {
                    MessageWriting.open(m, "e", "ss") { MessageWriting.append(m, "s", key); MessageWriting.append(m, "s", value) }
                }
            }
            MessageWriting.open(m, "v", "(so)") { MessageWriting.open(m, "r", "so") { MessageWriting.append(m, "s", "seat"); MessageWriting.append(m, "o", "/s") } }
            MessageWriting.open(m, "a", "{sv}") {
                MessageWriting.open(m, "e", "sv") { MessageWriting.append(m, "s", "Other"); MessageWriting.open(m, "v", "s") { MessageWriting.append(m, "s", "x") } }
                MessageWriting.open(m, "e", "sv") { MessageWriting.append(m, "s", "LockedHint"); MessageWriting.open(m, "v", "b") { MessageWriting.append(m, bool: true) } }
            }
            MessageWriting.open(m, "a", "s") { MessageWriting.append(m, "s", "gone") }
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
        try Self.withMessage({ m in MessageWriting.append(m, "s", "text") }) { reader throws in
            #expect(throws: Failure(errno: ENXIO)) { try reader.bool() }
            #expect(throws: Failure.self) { try reader.variantContents() }
            #expect(throws: Failure.self) { try reader.stringMap() }
            #expect(try reader.string() == "text")
            #expect(throws: Failure(errno: ENXIO)) { try reader.string() }
            #expect(throws: Failure(errno: ENXIO)) { try reader.enter("a", "s") }
        }
    }
}
