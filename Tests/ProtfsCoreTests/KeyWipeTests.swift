import Glibc
import ProtfsDomain
import Testing
@testable import ProtfsCore

/// The lock's wipe checks itself: a per-file key of a `complete` file that outlives it stops
/// the process, in every build, instead of leaving the vault `locked` with a key in memory.
@Suite struct KeyWipeTests {
    /// A filesystem side that forgets nothing: its content objects keep their keys.
    final class ForgetfulHolder: ContentKeyHolder {
        func dropContentKeys(of protectionClass: ProtectionClass) {}
    }

    @Test func aFileKeyThatOutlivesTheWipeStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            // A setup that fails exits cleanly: only the wipe's own check may fail this process.
            guard let f = try? LockControllerTests.Fixture(),
                  let (node, _, _) = try? f.fileSystem.createFile(Array("kept".utf8), in: f.fileSystem.root, mode: 0o600,
                                                                  caller: f.caller)
            else { exit(EXIT_SUCCESS) }
            let holder = ForgetfulHolder()
            f.controller.attach(contentKeys: holder, cache: LockControllerTests.RecordingCache(nodes: [node]))
            f.controller.lock(.now)
            withExtendedLifetime(holder) {}
        }
    }
}
