import Foundation
import ProtfsTestSupport
import Testing

/// The encrypted mount driven through the kernel with ordinary tools.
@Suite("Encrypted mount", .serialized)
struct MountTests {
    @Test("cp -a of /usr/include, diff -r clean before and after a remount")
    func copyTreeAndRemount() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let copy = CommandRunner.shell("cp -a /usr/include '\(vault.path("include"))' && diff -r /usr/include '\(vault.path("include"))'", timeout: 600)
        #expect(copy.succeeded, "\(copy.stdout)\(copy.stderr)")
        try vault.unmount()
        try vault.mount()
        let again = CommandRunner.shell("diff -r /usr/include '\(vault.path("include"))'", timeout: 300)
        #expect(again.succeeded, "\(again.stdout)\(again.stderr)")
    }

    @Test("more files than the daemon may hold descriptors for: create, ls -l (cold too), ls -a, read, rm")
    func moreFilesThanDescriptors() throws {
        let vault = try TestVault()
        // 1200 descriptors: the node table holds 688 nodes, so 3000 files only work if the
        // kernel is told to forget some (FUSE_NOTIFY_PRUNE).
        try vault.mount(launcher: ["/usr/bin/prlimit", "--nofile=1200:1200", "--"])
        defer { try? vault.unmount() }
        let directory = vault.path("many")
        let script = """
            set -e
            mkdir '\(directory)'
            cd '\(directory)'
            for i in $(seq 3000); do echo "$i" > "f$i"; done
            [ "$(ls -l | grep -c '^-')" = 3000 ]
            # From cold caches: the kernel's FORGETs thin the table while lookups refill it.
            for round in 1 2 3 4 5; do
                sync; echo 3 > /proc/sys/vm/drop_caches
                [ "$(ls -l | grep -c '^-')" = 3000 ]
            done
            [ "$(ls -a | grep -cE '^[.]{1,2}$')" = 2 ]
            for i in $(seq 3000); do read -r n < "f$i"; [ "$n" = "$i" ]; done
            cd /
            rm -rf '\(directory)'
            """
        let result = CommandRunner.shell(script, timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("find takes names only (no node per file); ls -l, d_ino and du after a bare listing are right")
    func listingsWithAndWithoutAttributes() throws {
        let vault = try TestVault()
        try vault.mount()
        let make = CommandRunner.shell("""
            set -e
            cd '\(vault.mountpoint)'
            mkdir top
            for d in 1 2 3 4 5; do mkdir "top/sub$d"; for f in 1 2 3; do echo "$d$f" > "top/sub$d/f$f"; done; done
            for i in $(seq 200); do head -c "$i" /dev/zero > "top/file$i"; done
            ln -s file7 top/link
            """, timeout: 120)
        #expect(make.succeeded, "\(make.stderr)")
        // A fresh mount: the kernel has cached nothing, every entry comes from a listing.
        try vault.unmount()
        try vault.mount()
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        let descriptors = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0 }
        let before = descriptors()
        let found = CommandRunner.shell("cd '\(vault.mountpoint)' && find top | sort")
        #expect(found.stdout.split(separator: "\n").count == 1 + 5 + 15 + 200 + 1, "\(found.stdout)\(found.stderr)")
        // One descriptor per node: the 5 subdirectories and `top`, not the 216 other entries.
        #expect(descriptors() - before < 50, "find made \(descriptors() - before) nodes")
        let checked = CommandRunner.shell("""
            set -e
            cd '\(vault.mountpoint)/top'
            python3 - <<'PY'
            import os
            entries = list(os.scandir("."))
            assert len(entries) == 206, len(entries)
            for entry in entries:
                status = os.lstat(entry.name)
                assert entry.inode() == status.st_ino, (entry.name, entry.inode(), status.st_ino)
                assert entry.is_dir(follow_symlinks=False) == (entry.name.startswith("sub")), entry.name
                assert entry.is_symlink() == (entry.name == "link"), entry.name
                if entry.name.startswith("file"):
                    assert status.st_size == int(entry.name[4:]), (entry.name, status.st_size)
            PY
            [ "$(ls -l sub3 | grep -c '^-')" = 3 ]
            [ "$(ls -l | awk '$NF == "file150" { print $5 }')" = 150 ]
            [ "$(cat sub4/f2)" = 42 ]
            [ "$(readlink link)" = file7 ]
            du -s . > /dev/null
            """)
        #expect(checked.succeeded, "\(checked.stdout)\(checked.stderr)")
    }

    @Test("a listing right after a create shows it, each time, however soon the listings follow each other")
    func listingAfterCreate() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("""
            mkdir d e
            for i in $(seq 300); do : > "d/f$i"; done
            : > e/one
            python3 - <<'PY'
            import os
            for round in range(40):
                names = os.listdir("d")
                assert len(names) == 300 + round, (round, len(names))
                open(f"d/new{round}", "w").close()
                assert f"new{round}" in os.listdir("d"), round
                # A listing whose one reply held the whole directory, left before its end.
                with os.scandir("e") as listing:
                    next(listing)
                open(f"e/new{round}", "w").close()
                assert len(os.listdir("e")) == 2 + round, round
            PY
            """)
    }

    @Test("tar and rsync -aHX round trips keep contents, links and xattrs")
    func tarAndRsync() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let source = vault.root.appendingPathComponent("source").path
        let script = """
            set -e
            mkdir -p '\(source)/a/b'
            head -c 100000 /dev/urandom > '\(source)/a/b/random'
            echo hello > '\(source)/a/hello'
            ln '\(source)/a/hello' '\(source)/a/hardlink'
            ln -s b/random '\(source)/a/symlink'
            setfattr -n user.note -v remembered '\(source)/a/hello'
            tar -C '\(source)' -cf - . | tar -C '\(vault.mountpoint)' -xf -
            diff -r '\(source)' '\(vault.mountpoint)'
            # The class cannot be removed (SPEC: EPERM), so rsync -X from a plain directory is
            # told not to try; the README says so.
            rsync -aHX --filter='-x user.protfs.class' '\(source)/' '\(vault.path("rsynced"))/'
            diff -r '\(source)' '\(vault.path("rsynced"))'
            [ "$(stat -c %h '\(vault.path("rsynced/a/hello"))')" = 2 ]
            [ "$(getfattr --only-values -n user.note '\(vault.path("rsynced/a/hello"))')" = remembered ]
            mkdir '\(vault.root.path)/back'
            rsync -aHX '\(vault.mountpoint)/rsynced/' '\(vault.root.path)/back/'
            diff -r '\(source)' '\(vault.root.path)/back'
            [ "$(getfattr --only-values -n user.note '\(vault.root.path)/back/a/hello')" = remembered ]
            rsync -aHX '\(vault.mountpoint)/rsynced/' '\(vault.path("second"))/'
            diff -r '\(source)' '\(vault.path("second"))'
            """
        let result = CommandRunner.shell(script, timeout: 300)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
    }

    @Test("hard links, long symlink targets, FIFOs and renameat2 flags")
    func posixSurface() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let longTarget = String(repeating: "d/", count: 2047) + "x"  // 4095 bytes
        vault.check("""
            echo one > f
            ln f g
            ln f h
            [ "$(stat -c %h f)" = 3 ]
            rm g
            [ "$(stat -c %h f)" = 2 ]
            ln -s '\(longTarget)' longlink
            [ "$(readlink longlink)" = '\(longTarget)' ]
            [ "$(stat -c %s longlink)" = 4095 ]
            ln -s short shortlink
            [ "$(readlink shortlink)" = short ]
            mkfifo pipe
            [ "$(stat -c %F pipe)" = fifo ]
            (echo through > pipe &) ; [ "$(cat pipe)" = through ]
            echo A > a; echo B > b
            python3 - <<'PY'
            import ctypes, os, errno
            libc = ctypes.CDLL(None, use_errno=True)
            AT_FDCWD = -100
            def renameat2(a, b, flags):
                r = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags)
                return 0 if r == 0 else ctypes.get_errno()
            assert renameat2("a", "b", 1) == errno.EEXIST          # RENAME_NOREPLACE
            assert renameat2("a", "b", 2) == 0                     # RENAME_EXCHANGE
            assert open("a").read() == "B\\n" and open("b").read() == "A\\n"
            assert renameat2("a", "c", 1) == 0
            assert not os.path.exists("a") and open("c").read() == "B\\n"
            PY
            name=$(printf 'n%.0s' $(seq 1 255))
            echo long > "$name"
            [ "$(cat "$name")" = long ]
            mv "$name" renamed-long
            [ "$(cat renamed-long)" = long ]
            mkdir -p d1/d2; mv d1 d3; [ -d d3/d2 ]
            rmdir d3/d2 d3
            """)
    }

    @Test("a renamed symlink keeps its target, owner and times; hard links of symlinks and exchanges with one are refused")
    func symlinkRenames() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script("symlink-renames.sh", [vault.mountpoint], timeout: 60)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput)")
    }

    @Test("xattrs round-trip with getfattr and setfattr; ENODATA and namespaces")
    func extendedAttributes() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("""
            touch f
            setfattr -n user.color -v blue f
            [ "$(getfattr --only-values -n user.color f)" = blue ]
            getfattr -d f | grep -q 'user.color="blue"'
            setfattr -x user.color f
            ! getfattr -n user.color f 2>&1 || exit 1
            getfattr -n user.color f 2>&1 | grep -q 'No such attribute'
            setfattr -n trusted.x -v 1 f 2>&1 | grep -q 'Operation not supported'
            """, timeout: 60)
    }

    @Test("the backing directory holds no plaintext name, content, xattr or symlink target")
    func nothingInTheClear() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let marker = "pfsmarker\(UUID().uuidString.prefix(8))"
        vault.check("""
            mkdir dir-\(marker)
            echo content-\(marker) > dir-\(marker)/file-\(marker)
            setfattr -n user.\(marker) -v value-\(marker) dir-\(marker)/file-\(marker)
            ln -s target-\(marker) link-\(marker)
            sync
            ! grep -r -a -l '\(marker)' '\(vault.backing)' || exit 1
            ! ls -R '\(vault.backing)' | grep -q '\(marker)' || exit 1
            ! getfattr -R -d -m - '\(vault.backing)' 2>/dev/null | grep -q '\(marker)' || exit 1
            ! find '\(vault.backing)' -type l -printf '%l\\n' | grep -q '\(marker)' || exit 1
            """, timeout: 60)
    }

    @Test("the backing directory does not tell the class of a file or a directory")
    func classesNotInTheClear() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let names = (1...8).map { "n\($0)" }
        try vault.makeClassDirectories(holding: Dictionary(uniqueKeysWithValues: names.map { ($0, "contents of \($0)") }))
        var headers: [String: [[UInt8]]] = [:]
        var records: [String: [[UInt8]]] = [:]
        for protectionClass in TestVault.classNames {
            let directory = TestVault.classDirectory(protectionClass)
            let made = vault.shell("cd \(directory) && for n in \(names.joined(separator: " ")); do mkdir \"sub-$n\"; done")
            try #require(made.succeeded, "\(made.stderr)")
            for name in names {
                let file = vault.protfsctl(["backing-path", vault.path("\(directory)/\(name)")])
                let subdirectory = vault.protfsctl(["backing-path", vault.path("\(directory)/sub-\(name)")])
                try #require(file.succeeded && subdirectory.succeeded, "\(file.stderr)\(subdirectory.stderr)")
                // backing-path names the object relative to the backing directory.
                let backing = { (result: CommandResult) in vault.backing + "/" + result.stdout.trimmingCharacters(in: .newlines) }
                let header = try Data(contentsOf: URL(fileURLWithPath: backing(file))).prefix(328)
                let record = try Data(contentsOf: URL(fileURLWithPath: backing(subdirectory) + "/protfs.dir"))
                headers[protectionClass, default: []].append([UInt8](header))
                records[protectionClass, default: []].append([UInt8](record))
            }
        }
        #expect(tellingOffsets(Array(headers.values)) == [], "file headers")
        #expect(tellingOffsets(Array(records.values)) == [], "directory records")
        #expect(headers.values.joined().allSatisfy { $0[4] == 2 } && records.values.joined().allSatisfy { $0[8] == 2 }, "format 2")
    }

    @Test("a tampered chunk is EIO for that file only; the mount and other files go on")
    func tamperIsEIO() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let setup = CommandRunner.shell("""
            set -e
            head -c 20000 /dev/urandom > '\(vault.path("victim"))'
            echo fine > '\(vault.path("bystander"))'
            """)
        #expect(setup.succeeded, "\(setup.stderr)")
        try vault.unmount()
        // The backing object of "victim" is the larger of the two files.
        let flip = CommandRunner.shell("""
            set -e
            f=$(find '\(vault.backing)' -maxdepth 1 -type f -size +10k | head -n1)
            printf '\\xff' | dd of="$f" bs=1 seek=5000 conv=notrunc status=none
            """)
        #expect(flip.succeeded, "\(flip.stderr)")
        try vault.mount()
        let read = CommandRunner.shell("cat '\(vault.path("victim"))' > /dev/null")
        #expect(!read.succeeded)
        #expect(read.stderr.contains("Input/output error"), "\(read.stderr)")
        let other = CommandRunner.shell("cat '\(vault.path("bystander"))'")
        #expect(other.stdout == "fine\n")
        // Logged once, by backing path and inode, never by plaintext name.
        let log = vault.daemonOutput
        #expect(log.components(separatedBy: "contents of").count == 2 && log.contains("(inode "), "\(log)")
        #expect(!log.contains("victim"))
        let stat = CommandRunner.shell("stat -c %s '\(vault.path("victim"))' && rm '\(vault.path("victim"))'")
        #expect(stat.succeeded, "\(stat.stderr)")
    }

    @Test("class hints: a missing one is repaired, a foreign one is EIO for that file only")
    func classHints() throws {
        let vault = try TestVault()
        try vault.mount()
        let setup = CommandRunner.shell("echo aaaa > '\(vault.path("a"))' && printf '%0100d' 0 > '\(vault.path("b"))'")
        #expect(setup.succeeded)
        try vault.unmount()
        // Backing objects by size: "a" is the smaller one.
        let tamper = CommandRunner.shell("""
            set -e
            cd '\(vault.backing)'
            a=$(find . -maxdepth 1 -type f ! -name 'protfs.*' -size -400c | head -n1)
            b=$(find . -maxdepth 1 -type f ! -name 'protfs.*' -size +399c | head -n1)
            hint=$(getfattr --only-values -e hex -n user.protfs.class "$a")
            setfattr -n user.protfs.class -v "$hint" "$b"
            setfattr -x user.protfs.class "$a"
            """)
        #expect(tamper.succeeded, "\(tamper.stderr)")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(CommandRunner.shell("cat '\(vault.path("a"))'").stdout == "aaaa\n")
        let foreign = CommandRunner.shell("cat '\(vault.path("b"))'")
        #expect(foreign.stderr.contains("Input/output error"), "\(foreign.stdout)\(foreign.stderr)")
        let repaired = CommandRunner.shell("find '\(vault.backing)' -maxdepth 1 -type f ! -name 'protfs.*' -size -400c -exec getfattr -n user.protfs.class {} \\;")
        #expect(repaired.stdout.contains("user.protfs.class"), "the missing hint is written again")
    }

    @Test("wrong passcode exits 3 and mounts nothing; a wrong device key says so and exits 1")
    func wrongSecrets() throws {
        let vault = try TestVault()
        let wrong = vault.root.appendingPathComponent("wrong").path
        try "not the passcode\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let bad = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-f",
                                                      "-o", "device_key=\(vault.deviceKey),passcode_file=\(wrong)"], timeout: 30)
        #expect(bad.status == 3, "\(bad.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
        let otherKey = vault.root.appendingPathComponent("other.key").path
        let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        _ = FileManager.default.createFile(atPath: otherKey, contents: Data(keyBytes), attributes: [.posixPermissions: 0o600])
        let mismatch = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-f",
                                                           "-o", "device_key=\(otherKey),passcode_file=\(vault.passcodeFile)"], timeout: 30)
        #expect(mismatch.status == 1)
        #expect(mismatch.stderr.contains("device key does not match this vault"), "\(mismatch.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    @Test("kill -9 of the daemon, then a new mount on the same mount point works")
    func remountAfterCrash() throws {
        let vault = try TestVault()
        try vault.mount()
        let write = CommandRunner.shell("echo survived > '\(vault.path("kept"))' && sync")
        #expect(write.succeeded)
        if let daemon = vault.daemon {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        // No unmount here: `protfs mount` itself must clear whatever the dead daemon left.
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(CommandRunner.shell("cat '\(vault.path("kept"))'").stdout == "survived\n")
    }
}
