import Foundation
import Testing

/// docs/CONTROL.md, "Lock": every accessibility in every lock state, on one real mount walked
/// through the states. Reading the secret, adding, and changing the secret need the class key
/// (exit 5 when the class forbids it now); a label change and delete work in every state.
@Suite("Keychain items under the lock", .serialized)
struct ItemLockMatrixTests {
    /// The seven accessibility values and the states their secrets are reachable in, written
    /// out here from docs/CLASSES.md and docs/CONTROL.md (not read from the code under test).
    static let reachable: [String: Set<MountState>] = [
        "whenUnlocked": [.unlocked, .locking],
        "whenUnlockedThisDeviceOnly": [.unlocked, .locking],
        "whenPasscodeSetThisDeviceOnly": [.unlocked, .locking],
        "afterFirstUnlock": [.unlocked, .locking, .locked],
        "afterFirstUnlockThisDeviceOnly": [.unlocked, .locking, .locked],
        "always": Set(MountState.allCases),
        "alwaysThisDeviceOnly": Set(MountState.allCases),
    ]

    /// The order the walk visits the states in: each reached from the one before.
    static let walk: [MountState] = [.unlocked, .locking, .locked, .beforeFirstUnlock]

    static func secret(_ accessibility: String, _ state: MountState, _ generation: Int) -> [UInt8] {
        Array("\(accessibility)/\(state.rawValue)/\(generation)\0\n".utf8) + [0xFF]
    }

    @Test("get, add, update and delete of every accessibility in every lock state")
    func everyAccessibilityInEveryState() throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=600"])
        defer { try? vault.unmount() }
        // One item per accessibility and state, added while unlocked.
        for accessibility in Self.reachable.keys.sorted() {
            for state in Self.walk {
                let file = try vault.secretFile("s-\(accessibility)-\(state)", Self.secret(accessibility, state, 0))
                let add = vault.item("add", ["--service", "matrix", "--account", "\(accessibility)/\(state)",
                                             "--accessible", accessibility, "--secret-file", file])
                try #require(add.succeeded, "\(add.stderr)")
            }
        }
        for state in Self.walk {
            switch state {
            case .unlocked: break
            case .locking: try vault.lock()
            case .locked: try vault.lock(now: true)
            case .beforeFirstUnlock:
                try vault.unmount()
                try vault.mount(passcode: false, options: ["grace=600"])
            }
            try #require(try vault.state() == state)
            for accessibility in Self.reachable.keys.sorted() {
                try check(accessibility, in: state, on: vault)
            }
        }
    }

    private func check(_ accessibility: String, in state: MountState, on vault: TestVault) throws {
        let allowed = Self.reachable[accessibility]!.contains(state)
        let expected: Int32 = allowed ? 0 : 5
        let account = "\(accessibility)/\(state)"
        let identity = ["--service", "matrix", "--account", account]
        let context = Comment(rawValue: "\(accessibility) while \(state.rawValue)")

        let get = vault.item("get", identity + ["--json"])
        #expect(get.status == expected, context)
        if allowed {
            let object = try JSONSerialization.jsonObject(with: Data(get.stdout.utf8)) as? [String: Any]
            #expect(object?["secret"] as? String == Data(Self.secret(accessibility, state, 0)).base64EncodedString(), context)
            #expect(object?["accessible"] as? String == accessibility, context)
        } else {
            #expect(get.stdout.isEmpty && get.stderr.contains("protfsctl unlock"), context)
        }

        let newSecret = try vault.secretFile("n-\(accessibility)-\(state)", Self.secret(accessibility, state, 1))
        #expect(vault.item("update", identity + ["--secret-file", newSecret]).status == expected, context)
        #expect(vault.item("update", identity + ["--label", "relabelled while \(state.rawValue)"]).status == 0, context)
        let listed = vault.item("list", ["--service", "matrix", "--json"])
        #expect(listed.succeeded && listed.stdout.contains("relabelled while \(state.rawValue)"), context)
        #expect(vault.item("delete", identity).status == 0, context)
        #expect(vault.item("get", identity).status == 6, context)

        let add = vault.item("add", ["--service", "matrix", "--account", account + "/new", "--accessible", accessibility,
                                     "--secret-file", newSecret])
        #expect(add.status == expected, context)
    }
}
