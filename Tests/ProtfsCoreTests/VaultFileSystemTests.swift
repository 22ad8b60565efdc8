import Glibc
import ProtfsCore
import ProtfsDomain
import ProtfsSystem
import ProtfsTestSupport
import Testing

/// The rules of docs/CLASSES.md that need no kernel, through the vault filesystem itself
/// (`VaultHarness`): no mount, no root, milliseconds. What the kernel adds (its caches,
/// mappings, permission checks, what ordinary commands ask of it) is the integration
/// tests' (`ClassesTests`, `LockTransitionTests`). The suites nested in this one (one file
/// each, named after what they test) hold the rest, so that `scripts/test` runs them all as
/// an unprivileged user by this suite's name.
@Suite("the vault filesystem, without FUSE")
struct VaultFileSystemTests {
    @Test("a lookup's attributes are those a separate attributes call gives, for every kind of entry")
    func lookupAttributes() throws {
        let vault = try VaultHarness()
        try vault.createFile("f", contents: Array(repeating: 7, count: 5000))
        try vault.makeDirectory("d")
        try vault.makeSymlink("l", target: "a target of some length")
        let fs = vault.fileSystem
        for name in ["f", "d", "l"] {
            let (node, attributes) = try fs.lookupWithAttributes(Array(name.utf8), in: fs.root)
            let separate = try fs.attributes(of: node)
            #expect(attributes.st_ino == separate.st_ino && attributes.st_mode == separate.st_mode, "\(name)")
            #expect(attributes.st_size == separate.st_size && attributes.st_nlink == separate.st_nlink, "\(name)")
            #expect(attributes.st_uid == separate.st_uid && attributes.st_gid == separate.st_gid, "\(name)")
        }
        #expect(try fs.lookupWithAttributes(Array("f".utf8), in: fs.root).attributes.st_size == 5000)
        #expect(throws: Errno.noEntry) { try fs.lookupWithAttributes(Array("missing".utf8), in: fs.root) }
    }

    @Test("while locked, none -> completeUnlessOpen works; none <-> complete does not; directories change in every state")
    func reclassWhileLocked() throws {
        let vault = try VaultHarness(rootClass: .none)
        try vault.createFile("open-to-b")
        try vault.createFile("to-a")
        try vault.makeDirectory("d", protectionClass: "complete")
        try vault.createFile("d/from-a")
        vault.lock()
        #expect(vault.state == .locked)
        try vault.setProtectionClass("completeUnlessOpen", of: "open-to-b")
        #expect(try vault.protectionClass(of: "open-to-b") == "completeUnlessOpen")
        #expect(throws: Errno.permissionDenied) { try vault.setProtectionClass("complete", of: "to-a") }
        #expect(throws: Errno.permissionDenied) { try vault.setProtectionClass("none", of: "d/from-a") }
        #expect(try vault.protectionClass(of: "to-a") == "none")
        try vault.setProtectionClass("none", of: "d")
        #expect(try vault.protectionClass(of: "d") == "none")
    }

    /// Reading an existing file and creating a new one, per class, after the lock: the
    /// `locked` column of docs/CLASSES.md's table.
    @Test("after the lock, each class allows what its row says", arguments: ProtectionClass.allCases)
    func lockedColumn(_ protectionClass: ProtectionClass) throws {
        let vault = try VaultHarness(rootClass: protectionClass)
        try vault.createFile("existing", contents: Array("data".utf8))
        vault.lock()
        let readable = protectionClass == .none || protectionClass == .completeUntilFirstUserAuthentication
        let creatable = protectionClass != .complete
        if readable {
            #expect(try vault.contents(of: "existing") == Array("data".utf8))
        } else {
            #expect(throws: Errno.permissionDenied) { try vault.contents(of: "existing") }
        }
        if creatable {
            try vault.createFile("new", contents: Array("n".utf8))
        } else {
            #expect(throws: Errno.permissionDenied) { try vault.createFile("new") }
        }
        // Names, attributes and other xattrs need no content key.
        #expect(try vault.list().contains(Array("existing".utf8)))
        #expect(try vault.attributes(of: "existing").st_size == 4)
        try vault.setExtendedAttribute("user.note", Array("n".utf8), of: "existing")
        #expect(try vault.extendedAttribute("user.note", of: "existing") == Array("n".utf8))
        try vault.unlock()
        #expect(try vault.contents(of: "existing") == Array("data".utf8))
    }

    @Test("before the first unlock only none and a completeUnlessOpen create are allowed")
    func beforeFirstUnlock() throws {
        for protectionClass in ProtectionClass.allCases {
            let vault = try VaultHarness(rootClass: protectionClass, unlocked: false)
            #expect(vault.state == .beforeFirstUnlock)
            let allowed = protectionClass == .none || protectionClass == .completeUnlessOpen
            if allowed {
                try vault.createFile("f", contents: Array("x".utf8))
            } else {
                #expect(throws: Errno.permissionDenied, "\(protectionClass)") { try vault.createFile("f") }
            }
            try vault.makeDirectory("d")  // no key needed
            if protectionClass == .completeUnlessOpen {
                #expect(throws: Errno.permissionDenied) { try vault.contents(of: "f") }
            }
        }
    }

    @Test("a complete handle opened before the lock is refused after it; a completeUnlessOpen one keeps working")
    func handlesAcrossTheLock() throws {
        let vault = try VaultHarness(rootClass: .complete)
        try vault.makeDirectory("b", protectionClass: "completeUnlessOpen")
        try vault.createFile("a", contents: Array("A".utf8))
        try vault.createFile("b/f", contents: Array("B".utf8))
        let a = try vault.open("a", writable: true)
        let b = try vault.open("b/f", writable: true)
        defer { vault.release(a); vault.release(b) }
        vault.lock()
        #expect(throws: Errno.permissionDenied) { try vault.read(a) }
        #expect(throws: Errno.permissionDenied) { try vault.write(a, Array("x".utf8)) }
        #expect(try vault.read(b) == Array("B".utf8))
        try vault.write(b, Array("b".utf8), at: 1)
        #expect(throws: Errno.permissionDenied, "a new open of an open completeUnlessOpen file") { try vault.open("b/f") }
        try vault.unlock()
        #expect(try vault.read(a) == Array("A".utf8), "the same handle works again after the unlock")
    }

    @Test("a wrong passcode leaves the vault locked")
    func wrongPasscode() throws {
        let vault = try VaultHarness()
        vault.lock()
        #expect(throws: (any Error).self) { try vault.unlock(passcode: "wrong") }
        #expect(vault.state == .locked)
    }

    @Test("names of every byte but / and NUL round-trip through create, lookup and listing")
    func namesOfEveryByte() throws {
        let vault = try VaultHarness(rootClass: .none)
        let bytes = (1...255).map(UInt8.init).filter { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ".") }
        var made: [[UInt8]] = []
        for byte in bytes {
            let name = [byte, byte]
            _ = try vault.fileSystem.createClosedFile(name, in: vault.fileSystem.root, mode: 0o600, caller: vault.caller)
            made.append(name)
        }
        let longest = [UInt8](repeating: UInt8(ascii: "n"), count: 255)
        _ = try vault.fileSystem.createClosedFile(longest, in: vault.fileSystem.root, mode: 0o600, caller: vault.caller)
        made.append(longest)
        for name in made { _ = try vault.fileSystem.lookup(name, in: vault.fileSystem.root) }
        #expect(Set(try vault.list()) == Set(made))
    }
}
