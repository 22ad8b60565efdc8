import Foundation

extension TestVault {
    /// A mounted vault for the programs of `Examples/`: new files unclassed unless they ask,
    /// a grace period of 1 s.
    static func mountedForExamples() throws -> TestVault {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount(options: ["grace=1"])
        return vault
    }

    /// Starts a program of `Examples/` on `app` in this vault, the vault its keychain, with
    /// the shared access group its idioms use among its groups (as an iOS app's entitlements
    /// would list it).
    func startExample(_ name: String) throws -> LineStream {
        try LineStream("/usr/bin/env", ["PROTFS_KEYCHAIN=\(mountpoint)", "PROTFS_KEYCHAIN_ACCESS_GROUPS=TEAMID.com.example.shared",
                                        CommandRunner.builtExecutable(name), path("app")])
    }
}
