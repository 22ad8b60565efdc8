import Foundation
import Testing

/// Requests at the edges of what the kernel lets through to the daemon: the largest
/// offsets, zero-length I/O, 255-byte names of any byte, O_DIRECT at odd offsets, every
/// fallocate mode, copy_file_range, SEEK_DATA/SEEK_HOLE, and xattrs of every size and
/// namespace. Each call must get Linux's answer (or docs/CLASSES.md's, where it says), and the daemon
/// must keep answering afterwards.
@Suite("Hostile requests through the kernel", .serialized)
struct HostileRequestTests {
    /// Runs a client kept in `Scripts/` (it imports call_checks.py) on a fresh mount, then
    /// checks that the daemon still answers.
    func run(_ script: String, timeout: TimeInterval = 120) throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script(script, [vault.mountpoint], timeout: timeout)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
        #expect(vault.daemon?.isRunning == true, "the daemon is gone: \(vault.daemonOutput)")
        let root = CommandRunner.run("stat", ["-c", "%F", vault.mountpoint], timeout: 10)
        #expect(root.succeeded && root.stdout.hasPrefix("directory"), "the mount no longer answers: \(root.stderr)")
    }

    @Test("huge offsets, zero-length I/O, truncation limits and SEEK_DATA/SEEK_HOLE")
    func offsetsAndSizes() throws {
        try run("requests/huge-offsets-and-sizes.py")
    }

    @Test("fallocate in every mode and copy_file_range at odd and huge offsets")
    func fallocateAndCopyRange() throws {
        try run("requests/fallocate-and-copy-range.py")
    }

    @Test("O_DIRECT reads and writes at aligned and odd offsets and lengths")
    func directIO() throws {
        try run("requests/direct-io-offsets.py")
    }

    @Test("names of 255 bytes and of every byte but '/' and NUL; 256 bytes is ENAMETOOLONG")
    func names() throws {
        try run("requests/names-of-every-byte.py")
    }

    @Test("xattrs: sizes 0, too small and too large, names in every namespace, non-UTF-8 names")
    func extendedAttributes() throws {
        try run("requests/xattr-sizes-and-namespaces.py")
    }
}
