import Foundation
import ProtfsDomain
import ProtfsTestSupport
import Testing

/// docs/CLASSES.md through the kernel: what ordinary commands may do to files of each
/// class in each lock state, and who may change a class. The rules themselves (spellings,
/// inheritance, re-classing in each state, moves and links) are the harness's
/// (`VaultFileSystemTests`), without a mount.
@Suite("Protection classes through the kernel")
struct ClassesTests {
    typealias Need = ClassTable.Need

    /// docs/CLASSES.md's table (`ClassTable`), for a class and a state as the mount spells them.
    static func allows(_ need: Need, _ protectionClass: String, in state: MountState) -> Bool {
        ClassTable.allows(need, ProtectionClass(spelling: protectionClass)!, in: LockState(rawValue: state.rawValue)!)
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
        Command(label: "ln -s, and getfattr through it",
                script: "ln -s f DIR/soft && readlink DIR/soft && getfattr --only-values -n user.protfs.class DIR/soft",
                need: .nothing, output: "f\nCLASS"),
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

    /// Issue 15, item 2: root of a user namespace anybody can make holds CAP_FOWNER there,
    /// and none over the mount: a group member who does not own a directory cannot change
    /// its class that way, though the mode lets them write the file and its other
    /// attributes. The owner and root still can. (The rule itself, for any other user, is
    /// the harness's `ClassAttributeTests`; this is the caller's uid through the kernel.)
    @Test("unshare -Ur gives another user no power over a class: refused, class unchanged; the owner and root may")
    func aUserNamespaceGivesNoPowerOverAClass() throws {
        let user = try TestUser.named("protfs-classes")
        let vault = try TestVault()
        try vault.mount(options: ["allow_other"])
        defer { try? vault.unmount() }
        vault.checkScript("mount/team-class-directory.sh", ["make", String(user.uid), String(user.gid)])
        for target in ["team", "team/f"] {
            let reclass = vault.shell("\(user.runs) unshare -Ur setfattr -n user.protfs.class -v none \(target)")
            #expect(!reclass.succeeded && reclass.stderr.contains("Operation not permitted"), "\(target): \(reclass.stderr)")
            #expect(vault.protectionClass(of: target) == "complete", "\(target)")
        }
        vault.checkScript("mount/team-class-directory.sh", ["reclass", String(user.uid), String(user.gid)])
    }
}
