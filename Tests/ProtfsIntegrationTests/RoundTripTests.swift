import Foundation
import Testing

/// Requests the kernel can answer from what it keeps, counted as the kernel sends them
/// (`Scripts/requests/count-requests.sh`): a saved round trip never reaches the daemon.
@Suite("Round trips the kernel saves")
struct RoundTripTests {
    /// How many requests of `opcode` the kernel sent to the vault while `script` ran in it.
    func requests(_ opcode: String, in vault: TestVault, during script: String) throws -> Int {
        let result = CommandRunner.script("requests/count-requests.sh", [vault.mountpoint, opcode, "/bin/bash", "-ec",
                                                                "cd '\(vault.mountpoint)'\n" + script])
        guard result.succeeded, let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("count-requests.sh: \(result.stdout)\(result.stderr)")
        }
        return count
    }

    @Test("a symlink's target is read once, then the kernel keeps it: across a rename and the lock")
    func symlinkTargetCached() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("ln -s 'the target' link")
        let reads = "for i in 1 2 3; do test \"$(readlink link)\" = 'the target'; done"
        #expect(try requests("READLINK", in: vault, during: reads) == 1)
        // A rename seals the target anew to its new place: the plaintext, and what the
        // kernel keeps of it, stay the same.
        vault.check("mv link moved && test \"$(readlink moved)\" = 'the target'")
        // Targets are not content: readable in every lock state (docs/CLASSES.md).
        try vault.lock(now: true)
        vault.check("test \"$(readlink moved)\" = 'the target'")
        vault.check("rm moved && ln -s other moved && test \"$(readlink moved)\" = other")
    }
}
