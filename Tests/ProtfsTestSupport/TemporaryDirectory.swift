import Foundation
import Glibc
import ProtfsSystem

/// A fresh directory under /tmp, removed with everything in it when released.
public final class TemporaryDirectory {
    public let path: String

    public init() {
        var template = Array("/tmp/protfs-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    public func child(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ bytes: [UInt8], to name: String, mode: mode_t = 0o600) throws {
        let fd = try FileDescriptor.open(path: child(name), [.writeOnly, .create, .truncate], mode: mode)
        defer { fd.close() }
        try fd.writeAll(bytes)
        try fd.changeMode(mode)
    }

    public func read(_ name: String) throws -> [UInt8] {
        let fd = try FileDescriptor.open(path: child(name), [.readOnly])
        defer { fd.close() }
        return try fd.readAll()
    }

    public func openDirectory(_ name: String = ".") throws -> FileDescriptor {
        try FileDescriptor.open(path: child(name), [.readOnly, .directory])
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
