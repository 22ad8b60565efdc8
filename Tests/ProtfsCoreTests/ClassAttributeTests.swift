import Glibc
import ProtfsCore
import ProtfsDomain
import ProtfsSystem
import ProtfsTestSupport
import Testing

extension VaultFileSystemTests {
    /// The `user.protfs.class` attribute (docs/CLASSES.md): its spellings, what it reads
    /// back, which entries have one and who may change it.
    @Suite("the class attribute")
    struct ClassAttributeTests {
        /// The three spellings of each class, in an order where every step changes the class.
        static let spellings: [(String, ProtectionClass)] = [
            ("complete", .complete), ("completeUnlessOpen", .completeUnlessOpen),
            ("completeUntilFirstUserAuthentication", .completeUntilFirstUserAuthentication), ("none", .none),
            ("NSFileProtectionComplete", .complete), ("NSFileProtectionCompleteUnlessOpen", .completeUnlessOpen),
            ("NSFileProtectionCompleteUntilFirstUserAuthentication", .completeUntilFirstUserAuthentication),
            ("NSFileProtectionNone", .none),
            ("A", .complete), ("B", .completeUnlessOpen), ("C", .completeUntilFirstUserAuthentication), ("D", .none),
        ]

        /// Values refused with EINVAL: other cases, near misses, empty, a trailing NUL or
        /// newline, surrounding blanks.
        static let refusedValues: [[UInt8]] = [
            "Complete", "COMPLETE", "completeunlessopen", "nsfileprotectionnone", "NSFileProtectioncomplete",
            "a", "d", "E", "AB", "", "complete\0", "A\0", " complete", "complete ", "complete\n", "none\n", "\tB",
            "completeUntilFirstUnlock", "NSFileProtection", "NSFileProtectionCompleteUnlessOpenX",
        ].map { Array($0.utf8) }

        @Test("all three spellings are taken; anything else is EINVAL and changes nothing; removal is EPERM")
        func spellings() throws {
            let vault = try VaultHarness()
            try vault.createFile("f", contents: Array("spelled\n".utf8))
            try vault.makeDirectory("d")
            for target in ["f", "d"] {
                for (spelling, canonical) in Self.spellings {
                    try vault.setProtectionClass(spelling, of: target)
                    #expect(try vault.protectionClass(of: target) == canonical.name, "\(spelling) on \(target)")
                }
                try vault.setProtectionClass("completeUnlessOpen", of: target)
                for value in Self.refusedValues {
                    #expect(throws: Errno.invalid, "\(value) on \(target)") {
                        try vault.setExtendedAttribute("user.protfs.class", value, of: target)
                    }
                    #expect(try vault.protectionClass(of: target) == "completeUnlessOpen", "after \(value) on \(target)")
                }
                #expect(throws: Errno.notPermitted, "removing from \(target)") {
                    try vault.removeExtendedAttribute("user.protfs.class", of: target)
                }
                #expect(try vault.protectionClass(of: target) == "completeUnlessOpen")
            }
            #expect(try vault.contents(of: "f") == Array("spelled\n".utf8), "a re-class leaves the contents alone")
        }

        @Test("the attribute reads the canonical name, bare, and is listed, on files and directories of every class")
        func canonicalName() throws {
            let vault = try VaultHarness()
            try vault.makeClassDirectories(holding: ["f": Array("x".utf8)])
            for protectionClass in ProtectionClass.allCases {
                let directory = VaultHarness.classDirectory(protectionClass)
                for path in ["\(directory)/f", directory] {
                    #expect(try vault.extendedAttribute("user.protfs.class", of: path) == Array(protectionClass.name.utf8), "\(path)")
                    #expect(try vault.extendedAttributeNames(of: path).filter { $0 == "user.protfs.class" }.count == 1, "\(path)")
                }
            }
        }

        @Test("symlinks and FIFOs have no class: no such attribute, none listed")
        func symlinksAndFifosHaveNoClass() throws {
            let vault = try VaultHarness()
            try vault.createFile("f", contents: Array("x\n".utf8))
            try vault.makeSymlink("link", target: "f")
            try vault.makeFIFO("fifo")
            for node in ["link", "fifo"] {
                #expect(throws: Errno.noData, "\(node)") { try vault.protectionClass(of: node) }
                #expect(try vault.extendedAttributeNames(of: node).isEmpty, "\(node)")
            }
        }

        /// The kernel's half (the caller's uid reaching the daemon, a user namespace's root
        /// counting for nothing) is `ClassesTests`'; this is the rule itself.
        @Test("only the owner, or root holding CAP_FOWNER, changes a class; another user may set other attributes")
        func onlyTheOwnerReclasses() throws {
            let vault = try VaultHarness()
            try vault.makeDirectory("shared", protectionClass: "completeUnlessOpen")
            try vault.createFile("shared/f", contents: Array("by the owner\n".utf8))
            try vault.makeDirectory("shared/d")
            let otherUID: uid_t = vault.caller.uid == 65534 ? 65533 : 65534
            let other = Caller(uid: otherUID, gid: otherUID, pid: getpid())
            try vault.setExtendedAttribute("user.note", Array("n".utf8), of: "shared/f", by: other)
            #expect(try vault.extendedAttribute("user.note", of: "shared/f") == Array("n".utf8))
            for target in ["shared/f", "shared/d"] {
                #expect(throws: Errno.notPermitted, "\(target)") { try vault.setProtectionClass("none", of: target, by: other) }
                #expect(try vault.protectionClass(of: target) == "completeUnlessOpen", "\(target)")
            }
            // As root, `mine` belongs to the other user (new entries go to their creator) and
            // root re-classes it with CAP_FOWNER; as another user, uid 0 alone counts for nothing.
            let running = geteuid() == 0
            let owner = running ? other : vault.caller
            try vault.createFile("shared/d/mine", contents: Array("mine\n".utf8), by: owner)
            #expect(try vault.attributes(of: "shared/d/mine").st_uid == owner.uid)
            try vault.setProtectionClass("none", of: "shared/d/mine", by: owner)
            #expect(try vault.protectionClass(of: "shared/d/mine") == "none", "the owner may re-class")
            let root = Caller(uid: 0, gid: 0, pid: getpid())
            if running {
                try vault.setProtectionClass("complete", of: "shared/d/mine", by: root)
                #expect(try vault.protectionClass(of: "shared/d/mine") == "complete", "root has CAP_FOWNER")
            } else {
                #expect(throws: Errno.notPermitted) { try vault.setProtectionClass("complete", of: "shared/d/mine", by: root) }
                #expect(try vault.protectionClass(of: "shared/d/mine") == "none")
            }
            #expect(try vault.contents(of: "shared/f") == Array("by the owner\n".utf8))
            #expect(try vault.contents(of: "shared/d/mine") == Array("mine\n".utf8))
        }
    }
}
