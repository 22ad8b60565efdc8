import CSystemd
import Glibc

/// A failed sd-bus call while making a message (its negative errno).
public struct LocalBusError: Error, Equatable {
    public let status: Int32
}

/// D-Bus messages made without a bus daemon: an sd-bus connection on one end of a socket
/// pair (never read) makes them, and `arrive` stamps and seals one as if it had come in.
public final class LocalBus {
    private let bus: OpaquePointer
    private let peer: Int32
    private var serial: UInt64 = 1

    public init() throws(LocalBusError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw LocalBusError(status: -errno)
        }
        var made: OpaquePointer?
        var status = sd_bus_new(&made)
        guard status >= 0, let made else {
            close(pair[0])
            close(pair[1])
            throw LocalBusError(status: status)
        }
        bus = made
        peer = pair[1]
        status = sd_bus_set_fd(bus, pair[0], pair[0])
        if status >= 0 { status = sd_bus_start(bus) }
        guard status >= 0 else {
            sd_bus_close_unref(bus)
            close(peer)
            throw LocalBusError(status: status)
        }
    }

    deinit {
        sd_bus_close_unref(bus)  // closes its end of the pair
        close(peer)
    }

    /// A method call to fill; the caller unrefs it.
    public func methodCall(to destination: String?, _ path: String, _ interface: String?, _ member: String) throws(LocalBusError) -> OpaquePointer {
        var made: OpaquePointer?
        let status = sd_bus_message_new_method_call(bus, &made, destination, path, interface, member)
        guard status >= 0, let made else { throw LocalBusError(status: status) }
        return made
    }

    /// A signal to fill; the caller unrefs it.
    public func signal(_ path: String, _ interface: String, _ member: String) throws(LocalBusError) -> OpaquePointer {
        var made: OpaquePointer?
        let status = sd_bus_message_new_signal(bus, &made, path, interface, member)
        guard status >= 0, let made else { throw LocalBusError(status: status) }
        return made
    }

    /// Stamps what the bus daemon would (the sender, and the destination of a unicast
    /// message), then seals and rewinds: the message reads as if it had arrived.
    public func arrive(_ message: OpaquePointer, from sender: String? = nil, to destination: String? = nil) throws(LocalBusError) {
        var status: Int32 = 0
        if let sender { status = sd_bus_message_set_sender(message, sender) }
        if status >= 0, let destination { status = sd_bus_message_set_destination(message, destination) }
        guard status >= 0 else { throw LocalBusError(status: status) }
        try seal(message)
    }

    /// Seals a message made here (a call, a signal, or a reply built to one) and rewinds it.
    public func seal(_ message: OpaquePointer) throws(LocalBusError) {
        serial += 1
        var status = sd_bus_message_seal(message, serial, 0)
        if status >= 0 { status = sd_bus_message_rewind(message, 1) }
        guard status >= 0 else { throw LocalBusError(status: status) }
    }
}

/// Writing arguments into a message being built (the tests check what they read back).
public enum MessageWriting {
    public static func append(_ message: OpaquePointer, _ type: Character, _ text: String) {
        _ = text.withCString { sd_bus_message_append_basic(message, CChar(type.asciiValue!), $0) }
    }

    public static func append(_ message: OpaquePointer, bool: Bool) {
        var bit: Int32 = bool ? 1 : 0
        _ = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &bit)
    }

    public static func open(_ message: OpaquePointer, _ type: Character, _ contents: String, _ body: () -> Void) {
        _ = sd_bus_message_open_container(message, CChar(type.asciiValue!), contents)
        body()
        _ = sd_bus_message_close_container(message)
    }
}
