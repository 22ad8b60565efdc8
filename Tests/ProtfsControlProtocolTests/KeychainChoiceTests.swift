import ProtfsControlProtocol
import Testing

/// Which vault the Swift clients of the keychain talk to (docs/SECRETS.md).
@Suite struct KeychainChoiceTests {
    let holding: (String) -> String? = { path in path.hasPrefix("/srv/keys") ? "/srv/keys" : nil }
    let owners: [String: UInt32] = ["/srv/keys": 1000, "/srv/vault": 1000, "/srv/other": 1001, "/srv/root": 0]

    func choose(_ named: String?, _ mounts: [String], caller: UInt32 = 1000) -> KeychainChoice {
        KeychainChoice.choose(named: named.map { KeychainChoice.Named($0, source: "PROTFS_KEYCHAIN") }, mounts: mounts,
                              caller: caller, holding: holding, owner: { owners[$0] })
    }

    @Test func aNamedPathIsTheMountHoldingItWhoeverOwnsIt() {
        #expect(choose("/srv/keys", ["/srv/vault"]) == .found("/srv/keys"))
        #expect(choose("/srv/keys/app/data", []) == .found("/srv/keys"))
        #expect(choose("/srv/keys", [], caller: 1001) == .found("/srv/keys"))
        #expect(choose("/tmp/x", ["/srv/vault"]) == .none("PROTFS_KEYCHAIN names /tmp/x, which is on no protfs mount"))
    }

    @Test func unnamedItIsTheCallersOnlyVault() {
        #expect(choose(nil, ["/srv/vault"]) == .found("/srv/vault"))
        #expect(choose(nil, ["/srv/vault", "/srv/vault", "/srv/other", "/srv/root"]) == .found("/srv/vault"))
        #expect(choose(nil, ["/srv/vault", "/srv/other"], caller: 1001) == .found("/srv/other"))
        #expect(choose(nil, ["/srv/vault", "/srv/root"], caller: 0) == .found("/srv/root"))
    }

    @Test func anotherUsersOnlyVaultIsNeverTheDefault() {
        #expect(choose(nil, ["/srv/vault"], caller: 1001) == .none(
            "none of the protfs mounts is a vault of uid 1001: /srv/vault (uid 1000); another user's vault is used only "
                + "when named: name the keychain vault in PROTFS_KEYCHAIN or ~/.config/protfs/keychain"))
        #expect(choose(nil, ["/srv/unknown"]) == .none(
            "none of the protfs mounts is a vault of uid 1000: /srv/unknown (owner unknown); another user's vault is used only "
                + "when named: name the keychain vault in PROTFS_KEYCHAIN or ~/.config/protfs/keychain"))
    }

    @Test func noneOrSeveralSayWhy() {
        #expect(choose(nil, []) == .none(
            "there is no protfs mount on this machine; name the keychain vault in PROTFS_KEYCHAIN or ~/.config/protfs/keychain"))
        #expect(choose(nil, ["/srv/vault", "/srv/keys"]) == .none(
            "there are 2 protfs vaults of uid 1000 (/srv/keys, /srv/vault); "
                + "name the keychain vault in PROTFS_KEYCHAIN or ~/.config/protfs/keychain"))
    }
}
