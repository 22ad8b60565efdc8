import Foundation
import Testing

/// docs/CLASSES.md through the kernel: what ordinary commands may do to files of each
/// class in each lock state, inheritance, the `user.protfs.class` attribute, and re-classing.
@Suite("Protection classes through the kernel")
struct ClassesTests {
    /// What a command asks of a file's class key (docs/CLASSES.md's "content").
    enum Need {
        /// Only names, attributes and metadata: the "always allowed" list.
        case nothing
        /// Opening an existing file to read or write it.
        case existingContent
        /// Creating a regular file (its new key is wrapped under the class key).
        case newFile
    }

    /// One cell of docs/CLASSES.md's table, as commands see it.
    enum Allowance {
        case everything
        case nothing
        /// `completeUnlessOpen` without its private key: new files yes, existing ones no.
        case newFilesOnly

        func permits(_ need: Need) -> Bool {
            switch (self, need) {
            case (_, .nothing), (.everything, _), (.newFilesOnly, .newFile): true
            case (.nothing, _), (.newFilesOnly, .existingContent): false
            }
        }
    }

    /// docs/CLASSES.md's table, written from its prose.
    static let table: [String: [MountState: Allowance]] = [
        "none": [.beforeFirstUnlock: .everything, .unlocked: .everything, .locking: .everything, .locked: .everything],
        "completeUntilFirstUserAuthentication":
            [.beforeFirstUnlock: .nothing, .unlocked: .everything, .locking: .everything, .locked: .everything],
        "completeUnlessOpen": [.beforeFirstUnlock: .newFilesOnly, .unlocked: .everything, .locking: .everything, .locked: .newFilesOnly],
        "complete": [.beforeFirstUnlock: .nothing, .unlocked: .everything, .locking: .everything, .locked: .nothing],
    ]

    static func allows(_ need: Need, _ protectionClass: String, in state: MountState) -> Bool {
        table[protectionClass]![state]!.permits(need)
    }

    /// A command run in a class's directory: `DIR` stands for `d-CLASS`, `CLASS` for the class,
    /// `OUT` for a directory outside the mount. `output` is the exact stdout when it succeeds.
    struct Command {
        let label: String
        let script: String
        let need: Need
        var output: String?
    }

    static let contents = "the contents of f\n"

    static let commands: [Command] = [
        Command(label: "cat", script: "cat DIR/f", need: .existingContent, output: contents),
        Command(label: "cp out of the vault", script: "cp DIR/f OUT/copied-CLASS && cat OUT/copied-CLASS",
                need: .existingContent, output: contents),
        Command(label: "cp into the vault", script: "cp OUT/source DIR/copied && stat -c %s DIR/copied", need: .newFile, output: "7\n"),
        Command(label: "O_DIRECT read", script: "dd if=DIR/f iflag=direct bs=4096 status=none", need: .existingContent, output: contents),
        Command(label: "O_DIRECT write", script: "printf x | dd of=DIR/g oflag=direct conv=notrunc status=none", need: .existingContent),
        Command(label: "echo >> existing", script: "echo more >> DIR/g", need: .existingContent),
        Command(label: "echo >> new", script: "echo new >> DIR/appended", need: .newFile),
        Command(label: "touch existing", script: "touch DIR/f", need: .nothing),
        Command(label: "touch new", script: "touch DIR/touched", need: .newFile),
        Command(label: "ls -l", script: "ls -l DIR >/dev/null && ls DIR | grep -cx f", need: .nothing, output: "1\n"),
        Command(label: "stat shows the plaintext size", script: "stat -c %s DIR/f", need: .nothing, output: "\(contents.utf8.count)\n"),
        Command(label: "mv", script: "mv DIR/f DIR/f.moved && mv DIR/f.moved DIR/f", need: .nothing),
        Command(label: "rm", script: "rm DIR/victim && ! test -e DIR/victim", need: .nothing),
        Command(label: "ln", script: "ln DIR/f DIR/hard && stat -c %h DIR/f", need: .nothing, output: "2\n"),
        Command(label: "ln -s", script: "ln -s f DIR/soft && readlink DIR/soft", need: .nothing, output: "f\n"),
        Command(label: "mkfifo", script: "mkfifo DIR/fifo && stat -c %F DIR/fifo", need: .nothing, output: "fifo\n"),
        Command(label: "mkdir", script: "mkdir DIR/sub && getfattr --only-values -n user.protfs.class DIR/sub", need: .nothing, output: "CLASS"),
        Command(label: "getfattr", script: "getfattr --only-values -n user.protfs.class DIR/f", need: .nothing, output: "CLASS"),
        Command(label: "setfattr of another user.* attribute",
                script: "setfattr -n user.note -v noted DIR/f && getfattr --only-values -n user.note DIR/f", need: .nothing, output: "noted"),
        Command(label: "setfattr of a directory's class",
                script: """
                    setfattr -n user.protfs.class -v none DIR/sub && setfattr -n user.protfs.class -v CLASS DIR/sub \
                    && getfattr --only-values -n user.protfs.class DIR/sub
                    """,
                need: .nothing, output: "CLASS"),
        Command(label: "rm -r", script: "rm -r DIR/sub && ! test -e DIR/sub", need: .nothing),
    ]

    @Test("every command on every class, as docs/CLASSES.md allows it in each state", arguments: MountState.allCases)
    func commandsInEachState(_ state: MountState) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        let outside = vault.root.appendingPathComponent("outside").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try "source\n".write(toFile: outside + "/source", atomically: true, encoding: .utf8)
        try vault.mount(in: state) {
            try vault.makeClassDirectories(holding: ["f": Self.contents, "g": "", "victim": ""])
        }
        for protectionClass in TestVault.classNames {
            for command in Self.commands {
                let script = command.script.replacingOccurrences(of: "DIR", with: TestVault.classDirectory(protectionClass))
                    .replacingOccurrences(of: "CLASS", with: protectionClass).replacingOccurrences(of: "OUT", with: outside)
                let result = vault.shell(script)
                let what = "\(command.label) on \(protectionClass) in \(state.rawValue)"
                if Self.allows(command.need, protectionClass, in: state) {
                    #expect(result.succeeded, "\(what) should work: \(result.stderr)")
                    if let output = command.output?.replacingOccurrences(of: "CLASS", with: protectionClass), result.succeeded {
                        #expect(result.stdout == output, "\(what) printed \(result.stdout.debugDescription)")
                    }
                } else {
                    #expect(!result.succeeded && result.stderr.contains("Permission denied"),
                            "\(what) should be Permission denied: exit \(result.status), \(result.stderr)")
                }
            }
        }
    }

    @Test("new entries inherit through three levels; a directory re-class affects only later children")
    func inheritance() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let setup = CommandRunner.script("make-nested-classes.sh", [vault.mountpoint])
        try #require(setup.succeeded, "\(setup.stderr)")
        #expect(vault.protectionClass(of: ".") == "completeUntilFirstUserAuthentication")
        for inherited in ["l1", "l1/l2", "l1/l2/l3", "l1/l2/l3/f"] {
            #expect(vault.protectionClass(of: inherited) == "complete", "\(inherited)")
        }
        let reclass = vault.shell("""
            set -e
            setfattr -n user.protfs.class -v none l1
            mkdir l1/m2; echo later > l1/later; echo later > l1/l2/later
            """)
        try #require(reclass.succeeded, "\(reclass.stderr)")
        for unchanged in ["l1/l2", "l1/l2/l3", "l1/l2/l3/f", "l1/l2/later"] {
            #expect(vault.protectionClass(of: unchanged) == "complete", "\(unchanged)")
        }
        for created in ["l1", "l1/m2", "l1/later"] {
            #expect(vault.protectionClass(of: created) == "none", "\(created)")
        }
        #expect(vault.shell("cat l1/l2/l3/f").stdout == "deep\n")
    }

    @Test("mv and ln keep the class and the contents")
    func renameAndLinkKeepTheClass() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try vault.makeClassDirectories(holding: ["f": "moved\n"])
        let moves = CommandRunner.script("move-and-link-across-classes.sh", [vault.mountpoint])
        try #require(moves.succeeded, "\(moves.stderr)")
        let expected = ["d-none/from-complete": "complete", "d-none/tree": "complete", "d-none/tree/g": "complete",
                        "d-none/linked": "completeUnlessOpen", "d-completeUnlessOpen/f": "completeUnlessOpen",
                        "d-complete/from-none": "none"]
        for (path, protectionClass) in expected {
            #expect(vault.protectionClass(of: path) == protectionClass, "\(path)")
        }
        #expect(vault.shell("echo later > d-none/tree/h").succeeded)
        #expect(vault.protectionClass(of: "d-none/tree/h") == "complete", "a moved directory keeps its own class for new children")
        #expect(vault.shell("cat d-none/from-complete d-none/linked d-complete/from-none d-none/tree/g").stdout
                == "moved\nmoved\nmoved\ninside\n")
    }

    @Test("getfattr prints the canonical name, bare; getfattr -d lists it")
    func canonicalName() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try vault.makeClassDirectories(holding: ["f": "x"])
        for protectionClass in TestVault.classNames {
            let directory = TestVault.classDirectory(protectionClass)
            #expect(vault.protectionClass(of: "\(directory)/f") == protectionClass)
            #expect(vault.protectionClass(of: directory) == protectionClass)
            let named = vault.shell("getfattr -n user.protfs.class \(directory)/f")
            #expect(named.stdout.contains("user.protfs.class=\"\(protectionClass)\"\n"), "\(named.stdout)")
            let dumped = vault.shell("getfattr -d \(directory)/f \(directory)")
            #expect(dumped.stdout.components(separatedBy: "user.protfs.class=\"\(protectionClass)\"\n").count == 3, "\(dumped.stdout)")
        }
    }

    /// The three spellings of each class, in an order where every step changes the class.
    static let spellings: [(String, String)] = [
        ("complete", "complete"), ("completeUnlessOpen", "completeUnlessOpen"),
        ("completeUntilFirstUserAuthentication", "completeUntilFirstUserAuthentication"), ("none", "none"),
        ("NSFileProtectionComplete", "complete"), ("NSFileProtectionCompleteUnlessOpen", "completeUnlessOpen"),
        ("NSFileProtectionCompleteUntilFirstUserAuthentication", "completeUntilFirstUserAuthentication"),
        ("NSFileProtectionNone", "none"),
        ("A", "complete"), ("B", "completeUnlessOpen"), ("C", "completeUntilFirstUserAuthentication"), ("D", "none"),
    ]

    /// Values `setfattr -v` must be refused with EINVAL (`0x` values are hex: "complete\0").
    static let refusedValues = ["Complete", "COMPLETE", "completeunlessopen", "nsfileprotectionnone", "NSFileProtectioncomplete",
                                "a", "d", "E", "AB", "\"\"", "0x636f6d706c65746500", "0x4100", " complete", "complete ",
                                "none\n", "\tB", "completeUntilFirstUnlock", "NSFileProtection"]

    @Test("setfattr takes all three spellings; anything else is EINVAL and changes nothing; removal is EPERM")
    func setfattrSpellings() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try #require(vault.shell("echo spelled > f && mkdir d").succeeded)
        for target in ["f", "d"] {
            for (spelling, canonical) in Self.spellings {
                let set = vault.shell("setfattr -n user.protfs.class -v '\(spelling)' \(target)")
                #expect(set.succeeded, "\(spelling) on \(target): \(set.stderr)")
                #expect(vault.protectionClass(of: target) == canonical, "\(spelling) on \(target)")
            }
            try #require(vault.shell("setfattr -n user.protfs.class -v completeUnlessOpen \(target)").succeeded)
            for value in Self.refusedValues {
                let set = vault.shell("setfattr -n user.protfs.class -v '\(value)' \(target)")
                #expect(!set.succeeded && set.stderr.contains("Invalid argument"),
                        "\(value.debugDescription) on \(target): exit \(set.status), \(set.stderr)")
                #expect(vault.protectionClass(of: target) == "completeUnlessOpen", "after \(value.debugDescription) on \(target)")
            }
            let remove = vault.shell("setfattr -x user.protfs.class \(target)")
            #expect(!remove.succeeded && remove.stderr.contains("Operation not permitted"), "removing from \(target): \(remove.stderr)")
            #expect(vault.protectionClass(of: target) == "completeUnlessOpen")
        }
        #expect(vault.shell("cat f").stdout == "spelled\n", "a re-class leaves the contents alone")
    }

    @Test("a non-owner cannot change a class even when the mode lets them write; the owner and root can")
    func onlyTheOwnerReclasses() throws {
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        let setup = CommandRunner.script("make-shared-class-directory.sh", [vault.mountpoint])
        try #require(setup.succeeded, "\(setup.stderr)")
        let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups"
        let writes = vault.shell("\(nobody) bash -c 'echo by nobody >> shared/f && setfattr -n user.note -v n shared/f'")
        #expect(writes.succeeded, "the mode lets nobody write the file and its other attributes: \(writes.stderr)")
        for target in ["shared/f", "shared/d"] {
            let reclass = vault.shell("\(nobody) setfattr -n user.protfs.class -v none \(target)")
            #expect(!reclass.succeeded && reclass.stderr.contains("Operation not permitted"), "\(target): \(reclass.stderr)")
            #expect(vault.protectionClass(of: target) == "completeUnlessOpen", "\(target)")
        }
        let own = vault.shell("\(nobody) bash -c 'echo mine > shared/d/mine && setfattr -n user.protfs.class -v none shared/d/mine'")
        #expect(own.succeeded, "the owner may re-class: \(own.stderr)")
        #expect(vault.protectionClass(of: "shared/d/mine") == "none")
        let root = vault.shell("setfattr -n user.protfs.class -v complete shared/d/mine")
        #expect(root.succeeded, "root has CAP_FOWNER: \(root.stderr)")
        #expect(vault.protectionClass(of: "shared/d/mine") == "complete")
        #expect(vault.shell("cat shared/f shared/d/mine").stdout == "by root\nby nobody\nmine\n")
    }

    /// Issue 15, item 2: root of a user namespace anybody can make holds CAP_FOWNER there,
    /// and none over the mount: a group member who does not own a directory cannot change
    /// its class that way. The owner and root still can.
    @Test("unshare -Ur gives another user no power over a class: refused, class unchanged; the owner and root may")
    func aUserNamespaceGivesNoPowerOverAClass() throws {
        let user = try TestUser.named("protfs-classes")
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.checkScript("team-class-directory.sh", ["make", String(user.uid), String(user.gid)])
        for target in ["team", "team/f"] {
            let reclass = vault.shell("\(user.runs) unshare -Ur setfattr -n user.protfs.class -v none \(target)")
            #expect(!reclass.succeeded && reclass.stderr.contains("Operation not permitted"), "\(target): \(reclass.stderr)")
            #expect(vault.protectionClass(of: target) == "complete", "\(target)")
        }
        vault.checkScript("team-class-directory.sh", ["reclass", String(user.uid), String(user.gid)])
    }

    @Test("symlinks and FIFOs have no class: getfattr says No such attribute, getfattr -d lists none")
    func symlinksAndFifosHaveNoClass() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try #require(vault.shell("echo x > f && ln -s f link && mkfifo fifo").succeeded)
        for node in ["link", "fifo"] {
            let get = vault.shell("getfattr -h -n user.protfs.class \(node)")
            #expect(!get.succeeded && get.stderr.contains("No such attribute"), "\(node): \(get.stdout)\(get.stderr)")
            let dump = vault.shell("getfattr -h -d -m - \(node)")
            #expect(dump.succeeded && dump.stdout.isEmpty, "\(node): \(dump.stdout)\(dump.stderr)")
        }
        #expect(vault.protectionClass(of: "link") == "completeUntilFirstUserAuthentication", "without -h getfattr follows the link")
    }

    /// docs/CLASSES.md: a file's re-class unwraps with the old class's key (what opening an
    /// existing file needs) and wraps with the new class's key (what creating a file needs;
    /// the public key for `completeUnlessOpen`).
    static func allowsReclass(from old: String, to new: String, in state: MountState) -> Bool {
        allows(.existingContent, old, in: state) && allows(.newFile, new, in: state)
    }

    @Test("re-classing a file in each state: refused with Permission denied where a key is missing, contents untouched",
          arguments: MountState.allCases)
    func reclassInEachState(_ state: MountState) throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        let pairs = TestVault.classNames.flatMap { old in TestVault.classNames.filter { $0 != old }.map { (old, $0) } }
        func file(_ old: String, _ new: String) -> String { "\(TestVault.classDirectory(old))/to-\(new)" }
        func contents(_ old: String, _ new: String) -> String { "from \(old) to \(new)\n" }
        try vault.mount(in: state) {
            try vault.makeClassDirectories()
            for (old, new) in pairs {
                try Data(contents(old, new).utf8).write(to: URL(fileURLWithPath: vault.path(file(old, new))))
            }
        }
        var expected: [String: String] = [:]
        for (old, new) in pairs {
            let set = vault.shell("setfattr -n user.protfs.class -v \(new) \(file(old, new))")
            let allowed = Self.allowsReclass(from: old, to: new, in: state)
            if allowed {
                #expect(set.succeeded, "\(old) -> \(new) in \(state.rawValue) should work: \(set.stderr)")
            } else {
                #expect(!set.succeeded && set.stderr.contains("Permission denied"),
                        "\(old) -> \(new) in \(state.rawValue) should be Permission denied: \(set.stderr)")
            }
            expected[file(old, new)] = allowed ? new : old
            #expect(vault.protectionClass(of: file(old, new)) == expected[file(old, new)], "\(old) -> \(new) in \(state.rawValue)")
        }
        try vault.unmount()
        try vault.mount()
        for (old, new) in pairs {
            #expect(vault.protectionClass(of: file(old, new)) == expected[file(old, new)], "\(old) -> \(new) after a remount")
            let read = vault.shell("cat \(file(old, new))")
            #expect(read.stdout == contents(old, new), "\(old) -> \(new) in \(state.rawValue): \(read.stderr)")
        }
    }
}
