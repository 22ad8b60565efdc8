// swift-tools-version:6.0
import PackageDescription

// Layers, bottom up (docs/ARCHITECTURE.md has the map): the C libraries and a tiny C shim
// for the GNU names Swift's Glibc module hides; the domain's values (classes, lock states,
// exit codes); crypto (libsodium, secure memory); system (typed syscalls); the control
// protocol's client side (no vault); the Swift library for apps (DataProtection); the
// on-disk format codecs (pure, the vault's files, keychain item records and backup archives:
// what the fuzzer links); core (the vault: keys, policy, filesystem, items, backup, fsck, its
// folders layers that ModuleBoundaryTests holds to docs/ARCHITECTURE.md; no FUSE); command-line
// support; the daemon's log; the FUSE adapter and, in a target of its own, its io_uring
// transport; the control server; the two executables.
let package = Package(
    name: "protfs",
    products: [
        .executable(name: "protfs", targets: ["protfs"]),
        .executable(name: "protfsctl", targets: ["protfsctl"]),
        .library(name: "DataProtection", targets: ["DataProtection"]),
        .executable(name: "dataprotection-lint", targets: ["dataprotection-lint"]),
        .plugin(name: "DataProtectionLintPlugin", targets: ["DataProtectionLintPlugin"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CTss2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        .target(name: "CProtfsSys"),
        .target(name: "CProtfsUring"),
        .target(name: "CProtfsCrypto", dependencies: ["COpenSSL"]),
        .target(name: "ProtfsCrypto", dependencies: ["CSodium", "COpenSSL", "CProtfsCrypto"]),
        .target(name: "ProtfsSystem", dependencies: ["CProtfsSys"]),
        .target(name: "ProtfsDomain"),
        .target(name: "ProtfsControlProtocol", dependencies: ["CProtfsSys", "ProtfsDomain", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "DataProtectionFiles", dependencies: ["CProtfsSys", "ProtfsDomain", "ProtfsSystem"]),
        .target(name: "DataProtection", dependencies: ["CProtfsSys", "ProtfsDomain", "ProtfsCrypto", "ProtfsSystem", "ProtfsControlProtocol",
                                                       "DataProtectionFiles"]),
        .target(name: "ProtfsFormat", dependencies: ["ProtfsDomain", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsCore", dependencies: ["ProtfsDomain", "ProtfsCrypto", "ProtfsSystem", "ProtfsFormat"]),
        .target(name: "ProtfsCommandLine", dependencies: ["ProtfsDomain", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsSystemd", dependencies: ["CSystemd", "ProtfsDomain"]),
        .target(name: "ProtfsBus", dependencies: ["CSystemd"]),
        .target(name: "ProtfsFollow", dependencies: ["CSystemd", "ProtfsBus", "ProtfsDomain", "ProtfsControlProtocol", "ProtfsSystem"]),
        .target(name: "ProtfsSecretService", dependencies: ["CSystemd", "ProtfsBus", "COpenSSL", "ProtfsDomain", "ProtfsControlProtocol", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsTPM", dependencies: ["CTss2", "ProtfsCrypto"]),
        .target(name: "ProtfsControl", dependencies: ["ProtfsDomain", "ProtfsControlProtocol", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsLog", dependencies: ["CProtfsSys", "ProtfsDomain"]),
        .target(name: "ProtfsFuse", dependencies: ["CFuse", "CProtfsSys", "ProtfsDomain", "ProtfsCrypto", "ProtfsCore", "ProtfsLog", "ProtfsSystem"]),
        .target(name: "ProtfsFuseUring", dependencies: ["CFuse", "CProtfsSys", "CProtfsUring", "ProtfsFuse", "ProtfsLog", "ProtfsSystem"]),
        .executableTarget(name: "protfs", dependencies: ["CFuse", "CSodium", "CProtfsSys", "ProtfsDomain", "ProtfsCrypto", "ProtfsSystem", "ProtfsFuse", "ProtfsFuseUring", "ProtfsLog", "ProtfsCore", "ProtfsFormat", "ProtfsCommandLine", "ProtfsControl", "ProtfsControlProtocol", "ProtfsSystemd", "ProtfsTPM"]),
        .executableTarget(name: "protfsctl", dependencies: ["ProtfsDomain", "ProtfsControlProtocol", "ProtfsCommandLine", "ProtfsFollow", "ProtfsCrypto", "ProtfsSystem", "CProtfsSys", "ProtfsSecretService"]),
        .executableTarget(name: "dataprotection-lint"),
        .plugin(name: "DataProtectionLintPlugin", capability: .buildTool(), dependencies: ["dataprotection-lint"]),
        // The examples adopt the build-time check as apps do: a silent call in them is a warning.
        .executableTarget(name: "DataProtectionExample", dependencies: ["DataProtection"], path: "Examples/DataProtectionExample",
                          swiftSettings: [.swiftLanguageMode(.v5)],  // as most iOS apps are still written
                          plugins: ["DataProtectionLintPlugin"]),
        .executableTarget(name: "DataProtectionIdioms", dependencies: ["DataProtection"], path: "Examples/DataProtectionIdioms",
                          swiftSettings: [.swiftLanguageMode(.v5)], plugins: ["DataProtectionLintPlugin"]),
        .executableTarget(name: "KeychainRate", dependencies: ["DataProtection"], path: "bench/KeychainRate"),
        .testTarget(name: "ProtfsCryptoTests", dependencies: ["CSodium", "COpenSSL", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"]),
        .testTarget(name: "ProtfsSystemTests", dependencies: ["ProtfsSystem", "ProtfsTestSupport"]),
        .target(name: "ProtfsTestSupport", dependencies: ["ProtfsDomain", "ProtfsCore", "ProtfsFormat", "ProtfsCrypto", "ProtfsSystem", "ProtfsControlProtocol"], path: "Tests/ProtfsTestSupport"),
        .testTarget(name: "ProtfsCommandLineTests", dependencies: ["ProtfsCommandLine", "ProtfsCrypto"]),
        .testTarget(name: "ProtfsDomainTests", dependencies: ["ProtfsDomain"]),
        .testTarget(name: "ProtfsFormatTests", dependencies: ["ProtfsDomain", "ProtfsFormat", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"],
                    resources: [.copy("Vectors")]),
        .testTarget(name: "ProtfsCoreTests", dependencies: ["ProtfsDomain", "ProtfsCore", "ProtfsFormat", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "ProtfsSecretServiceTests", dependencies: ["ProtfsSecretService", "ProtfsBus", "ProtfsBusTestSupport", "CSystemd", "ProtfsCrypto", "ProtfsDomain"]),
        .testTarget(name: "ProtfsControlProtocolTests", dependencies: ["ProtfsDomain", "ProtfsControlProtocol", "ProtfsCrypto", "ProtfsTestSupport"]),
        .testTarget(name: "ProtfsControlTests", dependencies: ["ProtfsDomain", "ProtfsControl", "ProtfsControlProtocol", "ProtfsCore", "ProtfsFormat", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"]),
        .testTarget(name: "ProtfsFollowTests", dependencies: ["ProtfsFollow", "ProtfsBusTestSupport", "CSystemd"]),
        .testTarget(name: "ProtfsTPMTests", dependencies: ["ProtfsTPM", "ProtfsCrypto", "ProtfsTestSupport"]),
        .target(name: "ProtfsBusTestSupport", dependencies: ["CSystemd"], path: "Tests/ProtfsBusTestSupport"),
        .testTarget(name: "ProtfsBusTests", dependencies: ["ProtfsBus", "ProtfsBusTestSupport", "CSystemd"]),
        .testTarget(name: "ProtfsSystemdTests", dependencies: ["ProtfsSystemd", "ProtfsDomain"]),
        .testTarget(name: "ProtfsFuseTests", dependencies: ["CFuse", "ProtfsDomain", "ProtfsFuse", "ProtfsCore", "ProtfsSystem"]),
        .testTarget(name: "ProtfsFuseUringTests", dependencies: ["CFuse", "CProtfsUring", "ProtfsFuseUring"]),
        .testTarget(name: "ProtfsLogTests", dependencies: ["ProtfsLog"]),
        .testTarget(name: "DataProtectionLintTests", dependencies: ["dataprotection-lint"]),
        .testTarget(name: "DataProtectionTests", dependencies: ["DataProtection", "DataProtectionFiles", "ProtfsControlProtocol", "ProtfsDomain"]),
        .testTarget(name: "ProtfsIntegrationTests", dependencies: ["DataProtection", "ProtfsDomain", "ProtfsSystem", "ProtfsCore", "ProtfsFormat", "ProtfsCrypto", "ProtfsTestSupport"],
                    exclude: ["Scripts"]),
    ]
)
