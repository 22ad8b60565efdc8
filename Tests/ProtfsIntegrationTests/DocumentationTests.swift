import Foundation
import Testing

/// The documents a newcomer reads stay true to the package: every target has its row in
/// the architecture's module table, the README stays short, and its links lead somewhere.
@Suite("documentation")
struct DocumentationTests {
    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// Every `name:` of a target declaration in Package.swift.
    static func packageTargets() throws -> [String] {
        let manifest = try text("Package.swift")
        let declaration = /\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"/
        return manifest.matches(of: declaration).map { String($0.output.1) }
    }

    @Test("every target of Package.swift has a row in docs/ARCHITECTURE.md")
    func everyTargetIsMapped() throws {
        let targets = try Self.packageTargets()
        #expect(targets.count > 10, "the manifest parse found too few targets: \(targets)")
        let tableRows = try Self.text("docs/ARCHITECTURE.md").split(separator: "\n").filter { $0.hasPrefix("| `") }
        for target in targets {
            let row = tableRows.first { row in
                let firstCell = row.split(separator: "|").first ?? ""
                return firstCell.contains("`\(target)`")
            }
            #expect(row != nil, "docs/ARCHITECTURE.md has no row for the target \(target)")
        }
    }

    @Test("each target's row in docs/ARCHITECTURE.md names exactly its dependencies in Package.swift")
    func dependencyColumnsMatch() throws {
        let dependencies = try ModuleBoundaryTests.packageDependencies()
        let targets = Set(try Self.packageTargets())
        let architecture = try Self.text("docs/ARCHITECTURE.md")
        let modules = try #require(architecture.firstRange(of: "## Modules"))
        let table = architecture[modules.upperBound...].split(separator: "\n### ").first ?? ""
        var compared = 0
        for row in table.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
            let named = (cells.first ?? "").matches(of: /`([^`]+)`/).map { String($0.output.1) }
            // A row of several targets (the unit tests) speaks of their layers in general.
            guard named.count == 1, let target = named.first, targets.contains(target), let column = cells.last else { continue }
            let documented = Set(column.matches(of: /`([^`]+)`/).map { String($0.output.1) })
            #expect(documented == Set(dependencies[target] ?? []),
                    "docs/ARCHITECTURE.md gives \(target) the dependencies \(documented.sorted()), Package.swift \((dependencies[target] ?? []).sorted())")
            compared += 1
        }
        #expect(compared > 20, "the parse compared too few rows: \(compared)")
    }

    @Test("every target has a test target named after it, or a line in docs/ARCHITECTURE.md saying why not")
    func everyTargetIsTested() throws {
        let manifest = try Self.text("Package.swift")
        let declaration = /\.(target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"/
        let declared = manifest.matches(of: declaration).map { (kind: String($0.output.1), name: String($0.output.2)) }
        let testTargets = Set(declared.filter { $0.kind == "testTarget" }.map(\.name))
        let architecture = try Self.text("docs/ARCHITECTURE.md")
        let section = try #require(architecture.firstRange(of: "### Targets without a test target of their own"))
        // The section's list: its items and their continuation lines, up to the first paragraph after it.
        let lines = architecture[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
        let listStart = lines.drop { !$0.hasPrefix("- ") }
        let exemptions = listStart.prefix { $0.hasPrefix("- ") || $0.hasPrefix("  ") }.joined(separator: "\n")
        for target in declared where target.kind != "testTarget" && !testTargets.contains(target.name + "Tests") {
            let explained = exemptions.contains("`\(target.name)`")
            #expect(explained, "\(target.name) has no \(target.name)Tests and docs/ARCHITECTURE.md does not say why")
        }
    }

    /// What a reader is sent to: the README, docs/ and the manual pages.
    static func documents() throws -> [String] {
        let root = CommandRunner.packageRoot
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        let manual = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("man").path)
            .filter { $0.hasSuffix(".scd") }.map { "man/" + $0 }
        return ["README.md"] + docs.sorted() + manual.sorted()
    }

    /// Other projects' files and names that a document discusses (docs/DATAPROTECTION.md: the
    /// keychain wrappers it runs unchanged, Apple's frameworks): not the package's to hold.
    static let outsideNames: [String: Set<String>] = [
        "docs/DATAPROTECTION.md": ["copyfile.c", "Data+Writing.swift", "WeakStorage", "Internal/WeakStorage.swift", "ClearTests.swift",
                                   "SecureEnclave.swift", "SinglePromptSecureEnclaveValet.swift", "LocalAuthentication",
                                   "AccessGroupTests.testSet"],
    ]

    @Test("every file, path, test, member and name that the README, docs/ and man/ cite exists")
    func citedNamesExist() throws {
        let root = CommandRunner.packageRoot
        let files = try Self.repositoryFiles()
        let declared = try SourceNames(files: files, root: root)
        let targets = Set(try Self.packageTargets())
        var checked = 0
        for document in try Self.documents() {
            let text = try Self.text(document)
            let outside = Self.outsideNames[document] ?? []
            for name in outside {
                #expect(text.contains("`\(name)`"), "\(document) no longer cites \(name): drop it from outsideNames")
            }
            for match in text.matches(of: /`([^`\n]+)`/) {
                let cited = String(match.output.1)
                guard !outside.contains(cited) else { continue }
                if cited.wholeMatch(of: /[\w+.\/-]+\.(?:swift|c|h|sh|py)/) != nil {
                    // `Name.swift`, `Folder/Name.swift` anywhere, or a path from the package root.
                    let exists = files.contains { $0 == cited || $0.hasSuffix("/" + cited) }
                    #expect(exists, "\(document) cites \(cited), which does not exist")
                } else if cited.wholeMatch(of: /(?:Sources|Tests|scripts|pam|bench|fuzz|man|docs|mount-helpers|secret-service|Examples)\/[\w+.\/-]*/) != nil {
                    let exists = FileManager.default.fileExists(atPath: root.appendingPathComponent(cited).path)
                    #expect(exists, "\(document) cites the path \(cited), which does not exist")
                } else if cited.wholeMatch(of: /[A-Z]\w*Tests/) != nil {
                    #expect(declared.types.contains(cited) || targets.contains(cited),
                            "\(document) cites the tests \(cited), which no test declares")
                } else if let member = cited.wholeMatch(of: /([A-Z]\w+)\.([a-z]\w*)(?:\(.*\))?/),
                          declared.types.contains(String(member.output.1)) {
                    #expect(declared.members.contains(String(member.output.2)),
                            "\(document) cites \(cited), but nothing of that name is declared")
                } else if cited.wholeMatch(of: /[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+/) != nil {
                    // A type, a D-Bus member, a C name: renamed in the code, it would linger here.
                    #expect(declared.words.contains(cited) || targets.contains(cited),
                            "\(document) cites \(cited), which no source names")
                } else {
                    continue
                }
                checked += 1
            }
        }
        #expect(checked > 100, "the parse found too few citations: \(checked)")
    }

    @Test("the README stays a short read")
    func readmeIsShort() throws {
        let readme = try Self.text("README.md")
        #expect(readme.utf8.count <= 16 * 1024, "README.md is \(readme.utf8.count) bytes: move detail to docs/")
    }

    @Test("every relative link of the README and docs/ names a file that exists")
    func linksResolve() throws {
        let root = CommandRunner.packageRoot
        let documents = ["README.md"] + (try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 })
        let link = /\]\(([^)#:]+)(?:#[^)]*)?\)/
        for document in documents {
            let base = root.appendingPathComponent(document).deletingLastPathComponent()
            for match in try Self.text(document).matches(of: link) {
                let target = base.appendingPathComponent(String(match.output.1)).standardizedFileURL.path
                #expect(FileManager.default.fileExists(atPath: target), "\(document) links to \(match.output.1), which does not exist")
            }
        }
    }

    /// The repository's files, tracked or new (not ignored).
    static func repositoryFiles() throws -> [String] {
        let listed = CommandRunner.run("/usr/bin/git", ["-C", CommandRunner.packageRoot.path, "ls-files", "--cached", "--others",
                                                        "--exclude-standard"])
        #expect(listed.succeeded, "git ls-files: \(listed.stderr)")
        return listed.stdout.split(separator: "\n").map(String.init)
    }

    /// The repository's files as git tracks them, less the binary test vectors.
    static func trackedFiles() throws -> [String] {
        let listed = CommandRunner.run("/usr/bin/git", ["-C", CommandRunner.packageRoot.path, "ls-files"])
        #expect(listed.succeeded, "git ls-files: \(listed.stderr)")
        return listed.stdout.split(separator: "\n").map(String.init).filter { path in
            !path.contains("Tests/Protfs") || !path.contains("/Vectors/") || path.hasSuffix(".py")
        }
    }

    @Test("code and docs cite only documents in the repository")
    func citationsStayInTheTree() throws {
        let root = CommandRunner.packageRoot
        let files = try Self.trackedFiles()
        #expect(files.count > 100, "git listed too few files: \(files.count)")
        // The product contract the project was built from is not part of the repository: a
        // reader who clones it must find every cited rule in docs/.
        let outside = /\b[S]PEC\b|\.\.\/shared\/|\b[N]OTES\.md/
        let cited = /\bdocs\/([A-Z][A-Z0-9-]*\.md)/
        for file in files {
            // Files that are not UTF-8 text (none is meant to cite anything) are passed over.
            guard let text = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                #expect(!line.contains(outside), "\(file):\(number + 1) cites a document outside the repository: \(line)")
                for match in line.matches(of: cited) {
                    let exists = FileManager.default.fileExists(atPath: root.appendingPathComponent("docs/" + match.output.1).path)
                    #expect(exists, "\(file):\(number + 1) cites docs/\(match.output.1), which does not exist")
                }
            }
        }
    }
}
