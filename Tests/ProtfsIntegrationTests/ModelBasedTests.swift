import Foundation
import Testing

/// Issue 5's model-based random test: `Tests/model/run` runs a seeded random sequence of
/// operations on the mount and, in lockstep, on a plain directory on ext4, comparing every
/// result, with locks, unlocks, remounts and `kill -9` of the daemon in between; a mismatch
/// is shrunk to the shortest sequence that still fails and printed with its seed.
///
/// `PROTFS_MODEL_OPS` (default 3000) and `PROTFS_MODEL_SEED` (default 1; `random` for a
/// fresh one, printed) choose the run; docs/GUARANTEES.md gives the long run's command.
@Suite("Model-based random testing against ext4")
struct ModelBasedTests {
    static let driver = CommandRunner.packageRoot.path + "/Tests/model/run"

    static func seed(from environment: [String: String]) -> UInt64 {
        guard let spelled = environment["PROTFS_MODEL_SEED"] else { return 1 }
        return spelled == "random" ? UInt64.random(in: 1...UInt64(UInt32.max)) : UInt64(spelled) ?? 1
    }

    @Test("a random sequence of operations gives ext4's results, across locks, remounts and crashes")
    func randomSequenceMatchesExt4() throws {
        let environment = ProcessInfo.processInfo.environment
        let operations = environment["PROTFS_MODEL_OPS"].flatMap { Int($0) } ?? 3000
        let seed = Self.seed(from: environment)
        let vault = try TestVault()
        defer { try? vault.unmount() }
        let reference = vault.root.path + "/reference"
        try FileManager.default.createDirectory(atPath: reference, withIntermediateDirectories: false)
        // The driver mounts the vault itself (it remounts it and kills its daemon); the
        // teardown unmounts whatever it left.
        let result = CommandRunner.run(Self.driver, [
            "--protfs", TestVault.protfs, "--protfsctl", TestVault.protfsctl,
            "--backing", vault.backing, "--mountpoint", vault.mountpoint,
            "--device-key", vault.deviceKey, "--passcode-file", vault.passcodeFile,
            "--reference", reference, "--daemon-log", vault.root.path + "/daemon.log",
            "--seed", String(seed), "--ops", String(operations),
        ], timeout: 300 + Double(operations) / 20)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(vault.daemonOutput.suffix(4000))")
        #expect(result.stdout.contains("passed: seed \(seed)"), "\(result.stdout)")
    }
}
