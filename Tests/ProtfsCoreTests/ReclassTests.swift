import ProtfsCore
import ProtfsDomain
import ProtfsSystem
import ProtfsTestSupport
import Testing

extension VaultFileSystemTests {
    /// Classes across the namespace (docs/CLASSES.md): what new entries inherit, what a move
    /// or a link keeps, and which re-classes each lock state allows.
    @Suite("inheritance and re-classing")
    struct ReclassTests {
        @Test("new entries inherit through three levels; a directory re-class affects only later children")
        func inheritance() throws {
            let vault = try VaultHarness()
            try vault.makeDirectory("l1", protectionClass: "complete")
            try vault.makeDirectory("l1/l2")
            try vault.makeDirectory("l1/l2/l3")
            try vault.createFile("l1/l2/l3/f", contents: Array("deep\n".utf8))
            #expect(try vault.protectionClass(of: "") == "completeUntilFirstUserAuthentication")
            for inherited in ["l1", "l1/l2", "l1/l2/l3", "l1/l2/l3/f"] {
                #expect(try vault.protectionClass(of: inherited) == "complete", "\(inherited)")
            }
            try vault.setProtectionClass("none", of: "l1")
            try vault.makeDirectory("l1/m2")
            try vault.createFile("l1/later", contents: Array("later\n".utf8))
            try vault.createFile("l1/l2/later", contents: Array("later\n".utf8))
            for unchanged in ["l1/l2", "l1/l2/l3", "l1/l2/l3/f", "l1/l2/later"] {
                #expect(try vault.protectionClass(of: unchanged) == "complete", "\(unchanged)")
            }
            for created in ["l1", "l1/m2", "l1/later"] {
                #expect(try vault.protectionClass(of: created) == "none", "\(created)")
            }
            #expect(try vault.contents(of: "l1/l2/l3/f") == Array("deep\n".utf8))
        }

        @Test("moves and hard links keep the class and the contents; a moved directory keeps its class for new children")
        func renameAndLinkKeepTheClass() throws {
            let vault = try VaultHarness()
            try vault.makeClassDirectories(holding: ["f": Array("moved\n".utf8)])
            try vault.makeDirectory("d-complete/tree")
            try vault.createFile("d-complete/tree/g", contents: Array("inside\n".utf8))
            try vault.rename("d-complete/f", to: "d-none/from-complete")
            try vault.rename("d-complete/tree", to: "d-none/tree")
            try vault.link("d-completeUnlessOpen/f", as: "d-none/linked")
            try vault.rename("d-none/f", to: "d-complete/from-none")
            let expected = ["d-none/from-complete": "complete", "d-none/tree": "complete", "d-none/tree/g": "complete",
                            "d-none/linked": "completeUnlessOpen", "d-completeUnlessOpen/f": "completeUnlessOpen",
                            "d-complete/from-none": "none"]
            for (path, protectionClass) in expected {
                #expect(try vault.protectionClass(of: path) == protectionClass, "\(path)")
            }
            #expect(throws: Errno.noEntry) { try vault.node("d-complete/f") }
            try vault.createFile("d-none/tree/h", contents: Array("later\n".utf8))
            #expect(try vault.protectionClass(of: "d-none/tree/h") == "complete", "a moved directory keeps its own class for new children")
            for (path, contents) in ["d-none/from-complete": "moved\n", "d-none/linked": "moved\n", "d-complete/from-none": "moved\n",
                                     "d-none/tree/g": "inside\n"] {
                #expect(try vault.contents(of: path) == Array(contents.utf8), "\(path)")
            }
        }

        @Test("re-classing a file in each state: EACCES where a key is missing, the class as answered and the contents untouched after a remount",
              arguments: LockState.allCases)
        func reclassInEachState(_ state: LockState) throws {
            let pairs = ProtectionClass.allCases.flatMap { old in ProtectionClass.allCases.filter { $0 != old }.map { (old, $0) } }
            func file(_ old: ProtectionClass, _ new: ProtectionClass) -> String { "\(VaultHarness.classDirectory(old))/to-\(new.name)" }
            func contents(_ old: ProtectionClass, _ new: ProtectionClass) -> [UInt8] { Array("from \(old.name) to \(new.name)\n".utf8) }
            let vault = try VaultHarness.inState(state) { vault in
                try vault.makeClassDirectories()
                for (old, new) in pairs { try vault.createFile(file(old, new), contents: contents(old, new)) }
            }
            #expect(vault.state == state)
            var expected: [String: ProtectionClass] = [:]
            for (old, new) in pairs {
                let allowed = ClassTable.allowsReclass(from: old, to: new, in: state)
                if allowed {
                    try vault.setProtectionClass(new.name, of: file(old, new))
                } else {
                    #expect(throws: Errno.permissionDenied, "\(old) -> \(new) in \(state)") {
                        try vault.setProtectionClass(new.name, of: file(old, new))
                    }
                }
                expected[file(old, new)] = allowed ? new : old
                #expect(try vault.protectionClass(of: file(old, new)) == expected[file(old, new)]!.name, "\(old) -> \(new) in \(state)")
            }
            let remounted = try vault.remounted()
            for (old, new) in pairs {
                #expect(try remounted.protectionClass(of: file(old, new)) == expected[file(old, new)]!.name, "\(old) -> \(new) after a remount")
                #expect(try remounted.contents(of: file(old, new)) == contents(old, new), "\(old) -> \(new) in \(state)")
            }
        }
    }
}
