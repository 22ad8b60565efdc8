import CSystemd
import Glibc
import ProtfsBus
import ProtfsSystem

/// Which message bus: logind lives on the system bus, screen savers on the user's session bus.
public enum BusKind: String, Sendable {
    case system
    case session
}

/// A D-Bus failure: the errno sd-bus returned and, for a method call, the error the peer sent.
public struct BusFailure: Error, CustomStringConvertible {
    public let description: String

    init(_ what: String, errno code: Int32, peer: sd_bus_error? = nil) {
        var text = "\(what): \(String(cString: strerror(code < 0 ? -code : code)))"
        if let peer, let name = peer.name {
            text = "\(what): \(String(cString: name))" + (peer.message.map { " (\(String(cString: $0)))" } ?? "")
        }
        description = text
    }
}

/// The follower's reader of replies and signals: failures name what was read, with sd-bus's
/// errno.
typealias BusReply = BusMessageReader<BusFailure>

extension BusMessageReader where Failure == BusFailure {
    init(_ message: OpaquePointer, what: String) {
        self.init(message) { BusFailure("\(what) did not have the expected form", errno: $0) }
    }
}

/// One connection to a message bus through sd-bus. The follower owns it from one thread: it
/// sends calls, adds signal matches, and lets `process()` hand arriving signals to `handler`
/// with their sender, for the owner to judge.
final class Bus {
    let kind: BusKind
    private var bus: OpaquePointer?
    /// Where signals go; retained for the connection's lifetime (sd-bus keeps a raw pointer).
    private let router: SignalRouter

    /// Connects (`DBUS_SYSTEM_BUS_ADDRESS` or `DBUS_SESSION_BUS_ADDRESS` when set, as sd-bus
    /// reads them) and says hello.
    init(_ kind: BusKind, handler: @escaping (ReceivedSignal) -> Void) throws(BusFailure) {
        self.kind = kind
        router = SignalRouter(kind, handler)
        var connection: OpaquePointer?
        let status = kind == .system ? sd_bus_open_system(&connection) : sd_bus_open_user(&connection)
        guard status >= 0, let connection else { throw BusFailure("cannot connect to the \(kind.rawValue) bus", errno: status) }
        bus = connection
    }

    deinit { disconnect() }

    func disconnect() {
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
    }

    var isOpen: Bool { bus.map { sd_bus_is_open($0) > 0 } ?? false }

    /// Delivers `member` signals of `interface` to the handler: from `sender`, on `path`, with a
    /// first argument `arg0`, when given (the bus daemon filters broadcasts, so the follower
    /// never sees the system bus' other traffic; signals sent to this connection alone come
    /// whatever the rule). The values are the follower's own constants.
    func match(sender: String? = nil, path: String? = nil, interface: String, member: String, arg0: String? = nil) throws(BusFailure) {
        var rule = "type='signal',interface='\(interface)',member='\(member)'"
        if let sender { rule += ",sender='\(sender)'" }
        if let path { rule += ",path='\(path)'" }
        if let arg0 { rule += ",arg0='\(arg0)'" }
        let status = sd_bus_add_match(bus, nil, rule, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            Unmanaged<SignalRouter>.fromOpaque(userdata).takeUnretainedValue().deliver(message)
            return 0
        }, Unmanaged.passUnretained(router).toOpaque())
        guard status >= 0 else { throw BusFailure("cannot subscribe to \(interface).\(member)", errno: status) }
    }

    /// Calls a method with string (and object path) arguments; `read` decodes the reply.
    func call<T>(_ destination: String, _ path: String, _ interface: String, _ member: String,
                 arguments: [BusArgument] = [], read: (BusReply) throws(BusFailure) -> T) throws(BusFailure) -> T {
        var message: OpaquePointer?
        var status = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard status >= 0 else { throw BusFailure("cannot make the call \(member)", errno: status) }
        defer { sd_bus_message_unref(message) }
        for argument in arguments {
            status = argument.append(to: message)
            guard status >= 0 else { throw BusFailure("cannot make the call \(member)", errno: status) }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        status = sd_bus_call(bus, message, Self.callTimeoutMicroseconds, &error, &reply)
        guard status >= 0, let reply else { throw BusFailure("\(interface).\(member) failed", errno: status, peer: error) }
        defer { sd_bus_message_unref(reply) }
        return try read(BusReply(reply, what: member))
    }

    /// A method call's longest wait: logind answers at once, and sleep waits for nobody long.
    static let callTimeoutMicroseconds: UInt64 = 5_000_000

    /// Handles whatever has arrived; false once the connection is gone.
    func process() -> Bool {
        guard let bus else { return false }
        while true {
            let status = sd_bus_process(bus, nil)
            if status < 0 { return false }
            if status == 0 { return sd_bus_is_open(bus) > 0 }
        }
    }

    /// What to poll for, and when sd-bus wants to be woken (its timeouts are `CLOCK_MONOTONIC`
    /// microseconds, the clock of `MonotonicInstant`).
    func pollRequest() -> (pollfd: pollfd, deadline: MonotonicInstant?)? {
        guard let bus else { return nil }
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard fd >= 0, events >= 0 else { return nil }
        var deadline: UInt64 = .max
        _ = sd_bus_get_timeout(bus, &deadline)
        let nanoseconds = deadline.multipliedReportingOverflow(by: 1000)
        return (pollfd(fd: fd, events: Int16(events), revents: 0),
                nanoseconds.overflow ? nil : MonotonicInstant(nanosecondsSinceStart: nanoseconds.partialValue))
    }
}

/// A method argument of the types logind's calls take.
enum BusArgument {
    case string(String)
    case uint32(UInt32)

    func append(to message: OpaquePointer?) -> Int32 {
        switch self {
        case .string(let text): text.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        case .uint32(var value): sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &value)
        }
    }
}

/// Hands the signals of one connection to its owner's handler.
private final class SignalRouter {
    let kind: BusKind
    let handler: (ReceivedSignal) -> Void
    init(_ kind: BusKind, _ handler: @escaping (ReceivedSignal) -> Void) {
        self.kind = kind
        self.handler = handler
    }
    func deliver(_ message: OpaquePointer) { handler(ReceivedSignal(message, on: kind)) }
}
