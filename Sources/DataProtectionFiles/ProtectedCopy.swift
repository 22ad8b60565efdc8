import Foundation
import Glibc
import ProtfsDomain
import ProtfsSystem

/// Copies a regular file into a new one whose class, given, is in force before its first
/// byte: as on iOS, where the copy of a file keeps its source's class (docs/DATAPROTECTION.md).
enum ProtectedCopy {
    private static let chunk = 1 << 20

    /// Copies the bytes and permissions of `source` to `destination`, which must not exist
    /// (`CocoaError.fileWriteFileExists`, as `FileManager`); whatever fails, the new file is
    /// removed. Errors are Foundation's, with the path read or written.
    static func copyFile(_ source: String, to destination: String, _ protectionClass: ProtectionClass) throws {
        // The source as it was looked at (a symbolic link swapped in is refused); the copy's
        // mode its permission bits, never a set-id bit the caller did not set itself.
        let input = try open(source, [.readOnly, .noFollow, .closeOnExec], .reading)
        let mode: mode_t
        do {
            mode = try input.borrowed.status().st_mode & 0o777
        } catch {
            throw FileErrors.cocoa(error, path: source, .reading)
        }
        let output = try open(destination, [.writeOnly, .create, .exclusive, .closeOnExec], .writing)
        do {
            try ClassAttribute.set(protectionClass, on: output.borrowed)
            try copyBytes(from: input.borrowed, to: output.borrowed, source: source)
            try output.borrowed.changeMode(mode)
            try output.borrowed.sync()
        } catch let error as CocoaError {
            unlink(destination)
            throw error
        } catch let error as Errno {
            unlink(destination)
            throw FileErrors.cocoa(error, path: destination, .writing)
        }
    }

    private static func open(_ path: String, _ flags: FileDescriptor.OpenFlags, _ access: FileErrors.Access) throws -> OwnedDescriptor {
        do {
            return try OwnedDescriptor.open(path: path, flags, mode: 0o600)
        } catch {
            throw FileErrors.cocoa(error, path: path, access)
        }
    }

    /// A read that fails is the source's error (257 while its class is locked); a write, the copy's.
    private static func copyBytes(from input: FileDescriptor, to output: FileDescriptor, source: String) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count: Int
            do {
                count = try input.read(into: buffer, at: offset)
            } catch {
                throw FileErrors.cocoa(error, path: source, .reading)
            }
            guard count > 0 else { return }
            try output.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: offset)
            offset += Int64(count)
        }
    }
}
