import Foundation
import Testing

/// What a target links follows from Package.swift: `protfsctl`, like the Swift library to
/// come, must reach the daemon through the control client alone, without the vault, FUSE or
/// the server, so that a bug or a secret in those is not in its address space.
@Suite("module boundaries")
struct ModuleBoundaryTests {
    /// Each target's direct dependencies, as Package.swift declares them.
    static func packageDependencies(_ manifestPath: String = "Package.swift") throws -> [String: [String]] {
        let manifest = try DocumentationTests.text(manifestPath)
        let declaration = /\.(?:target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"\s*,\s*dependencies:\s*\[([^\]]*)\]/
        var dependencies: [String: [String]] = [:]
        for match in manifest.matches(of: declaration) {
            dependencies[String(match.output.1)] = match.output.2.matches(of: /"([^"]+)"/).map { String($0.output.1) }
        }
        return dependencies
    }

    /// Every target `target` links, directly or through another.
    static func reach(of target: String, in dependencies: [String: [String]]) -> Set<String> {
        var reached: Set<String> = []
        var pending = dependencies[target] ?? []
        while let next = pending.popLast() {
            if reached.insert(next).inserted { pending += dependencies[next] ?? [] }
        }
        return reached
    }

    @Test("protfsctl links the control client without the vault, FUSE or the server")
    func controlToolStaysClientSide() throws {
        let dependencies = try Self.packageDependencies()
        let reached = Self.reach(of: "protfsctl", in: dependencies)
        #expect(reached.contains("ProtfsControlProtocol") && reached.contains("ProtfsCommandLine"),
                "the manifest parse missed protfsctl's dependencies: \(reached.sorted())")
        for forbidden in ["ProtfsCore", "ProtfsFuse", "CFuse", "ProtfsControl"] {
            #expect(!reached.contains(forbidden), "protfsctl links \(forbidden): \(reached.sorted())")
        }
    }

    @Test("the protfs executable loads FoundationEssentials, never Foundation and its ICU")
    func protfsStartsWithoutInternationalisation() {
        // Foundation's internationalisation libraries made every protfs command's cold start
        // (a restore's, a mount's) several times longer, for nothing protfs uses.
        let executable = TestVault.protfs
        let loaded = CommandRunner.run("ldd", [executable])
        #expect(loaded.succeeded, "ldd \(executable): \(loaded.stderr)")
        let libraries = loaded.stdout.split(separator: "\n").compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
        #expect(libraries.contains("libFoundationEssentials.so"), "the ldd parse missed the libraries: \(libraries)")
        for forbidden in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            #expect(!libraries.contains(forbidden), "protfs loads \(forbidden)")
        }
    }

    @Test("the format codecs link no vault, and the fuzzer links them without the vault core")
    func formatStaysPure() throws {
        let dependencies = try Self.packageDependencies()
        #expect(Self.reach(of: "ProtfsFormat", in: dependencies) == ["ProtfsDomain", "ProtfsCrypto", "ProtfsSystem", "CSodium", "CProtfsSys",
                                                                      "COpenSSL", "CProtfsCrypto"],
                "ProtfsFormat links more than the domain, crypto and system layers")
        let fuzzer = Self.reach(of: "DecoderFuzzer", in: try Self.packageDependencies("fuzz/Package.swift"))
        #expect(fuzzer.contains("ProtfsFormat") && fuzzer.contains("ProtfsControlProtocol"),
                "the manifest parse missed the fuzzer's dependencies: \(fuzzer.sorted())")
        #expect(!fuzzer.contains("ProtfsCore"), "the fuzzer links the vault core: \(fuzzer.sorted())")
    }

    @Test("the vault core knows a device-key sealer, not a TPM; only the protfs executable links the TPM")
    func tpmStaysAtTheEdge() throws {
        let dependencies = try Self.packageDependencies()
        #expect(Self.reach(of: "ProtfsTPM", in: dependencies) == ["CTss2", "ProtfsCrypto", "CSodium", "COpenSSL", "CProtfsCrypto"],
                "ProtfsTPM links more than tpm2-tss and the crypto layer")
        for target in ["ProtfsCore", "ProtfsFormat", "ProtfsFuse", "ProtfsControl", "protfsctl", "DataProtection"] {
            let reached = Self.reach(of: target, in: dependencies)
            #expect(!reached.contains("ProtfsTPM") && !reached.contains("CTss2"), "\(target) links the TPM: \(reached.sorted())")
        }
        #expect(Self.reach(of: "protfs", in: dependencies).contains("ProtfsTPM"), "the manifest parse missed protfs' TPM")
    }

    @Test("the io_uring transport is a target of its own that only the daemon links; the FUSE adapter links no io_uring")
    func ioUringStaysApart() throws {
        let dependencies = try Self.packageDependencies()
        for target in ["ProtfsFuse", "ProtfsCore", "ProtfsControl", "ProtfsLog", "protfsctl", "DataProtection"] {
            let reached = Self.reach(of: target, in: dependencies)
            #expect(!reached.contains("ProtfsFuseUring") && !reached.contains("CProtfsUring"), "\(target) links io_uring: \(reached.sorted())")
        }
        #expect(Self.reach(of: "protfs", in: dependencies).contains("ProtfsFuseUring"), "the manifest parse missed protfs' io_uring transport")
    }

    @Test("the daemon's log sits below the FUSE adapter: it links only the domain and the C shim")
    func logStaysLow() throws {
        let dependencies = try Self.packageDependencies()
        #expect(Self.reach(of: "ProtfsLog", in: dependencies) == ["CProtfsSys", "ProtfsDomain"],
                "ProtfsLog links more than the domain and the C shim")
        #expect(Self.reach(of: "ProtfsFuse", in: dependencies).contains("ProtfsLog"), "the manifest parse missed the adapter's log")
    }

    /// The vault core's layers as docs/ARCHITECTURE.md lists them ("Inside the core"), bottom
    /// up: each row's folders, and the Swift files the row says they hold.
    static func coreLayers() throws -> [(folders: [String], files: [String])] {
        let architecture = try DocumentationTests.text("docs/ARCHITECTURE.md")
        let start = try #require(architecture.firstRange(of: "## Inside the core"), "docs/ARCHITECTURE.md has no \"Inside the core\"")
        let section = architecture[start.upperBound...].split(separator: "\n## ").first ?? ""
        return section.split(separator: "\n").filter { $0.hasPrefix("| ") }.compactMap { row in
            let cells = row.split(separator: "|")
            let folders = (cells.first ?? "").matches(of: /`(\w+)\/`/).map { String($0.output.1) }
            let files = cells.dropFirst().joined().matches(of: /`([\w+]+\.swift)`/).map { String($0.output.1) }
            return folders.isEmpty ? nil : (folders, files)
        }
    }

    static let coreRoot = CommandRunner.packageRoot.appendingPathComponent("Sources/ProtfsCore")

    @Test("the vault core's folders use one another without a cycle")
    func coreFoldersFormNoCycle() throws {
        let graph = try CoreFolderGraph(root: Self.coreRoot)
        #expect(graph.declarations.count > 50 && graph.edges.count > 3,
                "the parse found too little: \(graph.declarations.count) types, \(graph.edges.count) folders using others")
        if let cycle = graph.cycle() {
            let steps = zip(cycle, cycle.dropFirst()).map { from, to in
                "\(from) -> \(to) (\(graph.edges[from]![to]!.sorted().prefix(3).map(\.description).joined(separator: ", ")))"
            }
            Issue.record("the core's folders use one another in a circle: \(steps.joined(separator: "; "))")
        }
    }

    @Test("each folder of the vault core uses only the layers below its own in docs/ARCHITECTURE.md")
    func coreFoldersFollowTheLayers() throws {
        let layers = try Self.coreLayers()
        #expect(layers.count > 3, "the parse of docs/ARCHITECTURE.md found too few layers: \(layers)")
        var rank: [String: Int] = [:]
        for (index, row) in layers.enumerated() {
            for folder in row.folders { rank[folder] = index }
            for file in row.files {
                let placed = row.folders.contains { FileManager.default.fileExists(atPath: Self.coreRoot.appendingPathComponent("\($0)/\(file)").path) }
                #expect(placed, "docs/ARCHITECTURE.md places \(file) in \(row.folders.joined(separator: " or ")), which do not hold it")
            }
        }
        let graph = try CoreFolderGraph(root: Self.coreRoot)
        for folder in rank.keys.sorted() where !graph.folders.contains(folder) {
            Issue.record("docs/ARCHITECTURE.md lists Sources/ProtfsCore/\(folder)/, which holds no Swift file")
        }
        for folder in graph.folders.sorted() {
            guard let own = rank[folder] else {
                Issue.record("Sources/ProtfsCore/\(folder == "." ? "" : folder + "/") is in no layer of docs/ARCHITECTURE.md")
                continue
            }
            for (used, uses) in (graph.edges[folder] ?? [:]).sorted(by: { $0.key < $1.key }) where (rank[used] ?? .max) >= own {
                Issue.record("\(folder) uses \(used), which is not below it: \(uses.sorted().map(\.description).joined(separator: ", "))")
            }
        }
    }
}
