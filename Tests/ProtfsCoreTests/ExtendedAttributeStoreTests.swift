import Dispatch
import Glibc
import ProtfsCore
import ProtfsSystem
import ProtfsTestSupport
import Synchronization
import Testing

/// The packed xattrs' read-modify-write, called straight on the vault filesystem: through a
/// mount the kernel already holds the inode's lock around each `setxattr`, so only here can
/// two changes of one file reach the daemon at once (and must still lose none).
@Suite("xattr changes of one file at once, without FUSE")
struct ExtendedAttributeStoreTests {
    @Test("8 threads setting 40 names each on one file lose none")
    func concurrentSetsLoseNone() throws {
        let vault = try VaultHarness()
        try vault.createFile("f")
        let node = try vault.node("f"), fileSystem = vault.fileSystem, caller = vault.caller
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<40 {
                do throws(Errno) {
                    try fileSystem.setExtendedAttribute(Array("user.t\(thread)_\(index)".utf8), [UInt8(index)], flags: 0,
                                                        of: node, caller: caller)
                } catch {
                    failures.withLock { $0.append("user.t\(thread)_\(index): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let names = Set(try fileSystem.extendedAttributeNames(of: node).map { String(decoding: $0, as: UTF8.self) })
        let lost = (0..<8).flatMap { thread in (0..<40).map { "user.t\(thread)_\($0)" } }.filter { !names.contains($0) }
        #expect(lost.isEmpty, "lost \(lost.count): \(lost.prefix(10))")
        #expect(names.count == 8 * 40 + 1)
    }
}
