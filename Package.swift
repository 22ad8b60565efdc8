// swift-tools-version:6.0
import PackageDescription

// Layers, bottom up: the C libraries and a tiny C shim for the GNU names Swift's Glibc
// module hides; crypto (libsodium, secure memory); system (typed syscalls); core (the
// vault: classes, keybag, format, policy; no FUSE); the FUSE adapter; control (socket);
// and the two executables.
let package = Package(
    name: "protfs",
    products: [
        .executable(name: "protfs", targets: ["protfs"]),
        .executable(name: "protfsctl", targets: ["protfsctl"]),
    ],
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CFuse", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .target(name: "CProtfsSys"),
        .target(name: "ProtfsCrypto", dependencies: ["CSodium"]),
        .target(name: "ProtfsSystem", dependencies: ["CProtfsSys"]),
        .target(name: "ProtfsCore", dependencies: ["ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsControl", dependencies: ["CProtfsSys", "ProtfsCrypto", "ProtfsCore", "ProtfsSystem"]),
        .target(name: "ProtfsFuse", dependencies: ["CFuse", "CProtfsSys", "ProtfsCrypto", "ProtfsCore", "ProtfsSystem", "ProtfsControl"]),
        .executableTarget(name: "protfs", dependencies: ["CFuse", "CSodium", "CProtfsSys", "ProtfsCrypto", "ProtfsSystem", "ProtfsFuse", "ProtfsCore", "ProtfsControl"]),
        .executableTarget(name: "protfsctl", dependencies: ["ProtfsControl", "ProtfsCore", "ProtfsCrypto", "ProtfsSystem", "CProtfsSys"]),
        .testTarget(name: "ProtfsCryptoTests", dependencies: ["ProtfsCrypto"]),
        .target(name: "ProtfsTestSupport", path: "Tests/ProtfsTestSupport"),
        .testTarget(name: "ProtfsCoreTests", dependencies: ["ProtfsCore", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "ProtfsControlTests", dependencies: ["ProtfsControl", "ProtfsCore", "ProtfsCrypto", "ProtfsSystem", "ProtfsTestSupport"]),
        .testTarget(name: "ProtfsFuseTests", dependencies: ["ProtfsFuse", "ProtfsCore", "ProtfsSystem"]),
        .testTarget(name: "ProtfsIntegrationTests", dependencies: ["ProtfsSystem", "ProtfsCore", "ProtfsCrypto", "ProtfsTestSupport"],
                    exclude: ["Scripts"]),
    ]
)
