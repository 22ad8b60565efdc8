import Foundation
import Testing

/// Both content AEADs through a real mount (docs/FORMAT.md, "Contents"): `init --cipher`
/// records the choice, `status` says it, files of every class read back what random writes
/// and truncations left, and a changed backing byte is `EIO`.
@Suite("content ciphers through a mount")
struct ContentCipherMountTests {
    /// 12345 plaintext bytes: three full chunks and one of 57 after the 328-byte header.
    static let tamperedBackingSize = 328 + 3 * 4136 + 57 + 40

    @Test("each cipher seals every class through the mount; a changed chunk is EIO", arguments: ["aes-256-gcm", "xchacha20-poly1305"])
    func everyClassUnderEachCipher(_ cipher: String) throws {
        let vault = try TestVault(initialize: false)
        try vault.initialize(cipher: cipher)
        let keybag = try Data(contentsOf: URL(fileURLWithPath: vault.backing + "/protfs.keybag"))
        #expect(keybag[8] == (cipher == "aes-256-gcm" ? 3 : 1), "keybag version")
        try vault.mount()
        defer { try? vault.unmount() }
        let status = vault.protfsctl(["status", "--json", vault.mountpoint])
        #expect(status.stdout.contains("\"cipher\":\"\(cipher)\""), "\(status.stdout)")
        let classes = ["complete", "completeUnlessOpen", "completeUntilFirstUserAuthentication", "none"]
        for name in classes {
            try FileManager.default.createDirectory(atPath: vault.path(name), withIntermediateDirectories: false)
            let set = vault.protfsctl(["class", "set", name, vault.path(name)])
            #expect(set.succeeded, "\(set.stderr)")
        }
        vault.checkScript("mount/content-cipher-workout.py", classes)
        try vault.unmount()

        let tamper = CommandRunner.script("fsck/flip-byte-of-sized-file.sh", [vault.backing, String(Self.tamperedBackingSize)])
        #expect(tamper.succeeded, "\(tamper.stderr)")
        try vault.mount()
        let read = CommandRunner.run("/bin/cat", [vault.path("complete/to-tamper")])
        #expect(!read.succeeded && read.stderr.contains("Input/output error"), "\(read.status) \(read.stderr)")
        #expect(CommandRunner.run("/bin/cat", [vault.path("none/workout")]).succeeded, "the other files still read")
    }
}
