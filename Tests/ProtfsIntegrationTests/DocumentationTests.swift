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

    @Test("every Swift file docs/ARCHITECTURE.md names exists")
    func citedFilesExist() throws {
        let root = CommandRunner.packageRoot
        let sources = try FileManager.default.subpathsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
        // `Name.swift` or `Folder/Name.swift` below Sources/, or a path from the package root.
        let cited = /`([\w+\/]+\.swift)`/
        let names = try Self.text("docs/ARCHITECTURE.md").matches(of: cited).map { String($0.output.1) }
        #expect(names.count > 10, "the parse found too few file names: \(names)")
        for name in names {
            let exists = sources.contains { $0 == name || $0.hasSuffix("/" + name) }
                || FileManager.default.fileExists(atPath: root.appendingPathComponent(name).path)
            #expect(exists, "docs/ARCHITECTURE.md names \(name), which does not exist")
        }
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
