import ProtfsCore
import ProtfsDomain
import ProtfsSystem
import ProtfsTestSupport
import Testing

extension VaultFileSystemTests {
    /// `completeUnlessOpen` without its private key (docs/CLASSES.md): a handle opened before
    /// the lock lives on, a new file can be made, and neither can be opened anew until the
    /// unlock. What the kernel adds (its page cache, mappings, fsync) is `LockTransitionTests`'.
    @Suite("completeUnlessOpen across the lock")
    struct UnlessOpenAcrossTheLockTests {
        @Test("a handle opened before the lock reads and writes until closed; no new open while locked")
        func handleAcrossTheLock() throws {
            let vault = try VaultHarness(rootClass: .completeUnlessOpen)
            let before = Array("unless open\n".utf8), written = Array("written while locked\n".utf8)
            try vault.createFile("f", contents: before)
            let handle = try vault.open("f", writable: true)
            vault.lock(.now)
            #expect(vault.state == .locked)
            #expect(try vault.read(handle) == before)
            try vault.write(handle, written, at: Int64(before.count))
            #expect(try vault.read(handle) == before + written)
            #expect(throws: Errno.permissionDenied, "open anew") { try vault.open("f") }
            #expect(throws: Errno.permissionDenied, "open anew to write") { try vault.open("f", writable: true) }
            #expect(try vault.read(handle) == before + written, "read still")
            vault.release(handle)
            #expect(throws: Errno.permissionDenied, "open after close") { try vault.open("f") }
            try vault.unlock()
            #expect(try vault.contents(of: "f") == before + written)
        }

        @Test("a file created without the private key has its class and size, cannot be opened, and reads after the unlock",
              arguments: [LockState.locked, .beforeFirstUnlock])
        func createdWhileLocked(_ state: LockState) throws {
            let vault = try VaultHarness.inState(state) { try $0.makeClassDirectories() }
            #expect(vault.state == state)
            try vault.createFile("d-completeUnlessOpen/new", contents: Array("created\n".utf8))
            #expect(try vault.attributes(of: "d-completeUnlessOpen/new").st_size == 8)
            #expect(try vault.protectionClass(of: "d-completeUnlessOpen/new") == "completeUnlessOpen")
            #expect(throws: Errno.permissionDenied) { try vault.contents(of: "d-completeUnlessOpen/new") }
            try vault.unlock()
            #expect(try vault.contents(of: "d-completeUnlessOpen/new") == Array("created\n".utf8))
        }
    }
}
