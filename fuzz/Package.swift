// swift-tools-version:6.0
import PackageDescription

// Coverage-guided fuzzing of protfs's decoders with libFuzzer: `scripts/fuzz` builds this
// package with `-sanitize=fuzzer,address`. The library targets are the main package's own
// sources (symlinked), so what is fuzzed is what ships: the format codecs (keychain item
// records and backup archives among them) and the control protocol, not the vault core; and the content cipher's XChaCha20-Poly1305 through OpenSSL
// against libsodium's, on random inputs.
let package = Package(
    name: "protfs-fuzz",
    targets: [
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CProtfsSys"),
        .target(name: "CProtfsCrypto", dependencies: ["COpenSSL"]),
        .target(name: "ProtfsCrypto", dependencies: ["CSodium", "COpenSSL", "CProtfsCrypto"]),
        .target(name: "ProtfsSystem", dependencies: ["CProtfsSys"]),
        .target(name: "ProtfsDomain"),
        .target(name: "ProtfsFormat", dependencies: ["ProtfsDomain", "ProtfsCrypto", "ProtfsSystem"]),
        .target(name: "ProtfsControlProtocol", dependencies: ["CProtfsSys", "ProtfsDomain", "ProtfsCrypto", "ProtfsSystem"]),
        .executableTarget(name: "DecoderFuzzer", dependencies: ["CSodium", "ProtfsControlProtocol", "ProtfsFormat", "ProtfsDomain", "ProtfsCrypto",
                                                               "ProtfsSystem"],
                          swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ]
)
