import Foundation

extension TestVault {
    /// A mounted vault for the programs of `Examples/`: new files unclassed unless they ask,
    /// a grace period of 1 s.
    static func mountedForExamples() throws -> TestVault {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount(options: ["grace=1"])
        return vault
    }

    /// Starts a program of `Examples/` on `app` in this vault, the vault its keychain.
    func startExample(_ name: String) throws -> LineStream {
        try LineStream("/usr/bin/env", ["PROTFS_KEYCHAIN=\(mountpoint)", CommandRunner.builtExecutable(name), path("app")])
    }
}
