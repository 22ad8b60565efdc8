import Foundation
import Testing

/// The manual pages in `man/` (scdoc) render clean and say what the tools do: every command
/// and option of `--help` is in the page and the page has no other, and every mount option
/// `protfs mount` parses is in mount.protfs(8) and the page has no other.
@Suite("manual pages")
struct ManualPageTests {
    static let manDirectory = CommandRunner.packageRoot.appendingPathComponent("man").path

    static func page(_ name: String) throws -> String {
        try String(contentsOfFile: manDirectory + "/" + name + ".scd", encoding: .utf8)
    }

    @Test("every page renders and `mandoc -T lint` says nothing")
    func lintClean() throws {
        let pages = try FileManager.default.contentsOfDirectory(atPath: Self.manDirectory).filter { $0.hasSuffix(".scd") }
        #expect(pages.count >= 3, "\(pages)")
        let rendered = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-man-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: rendered) }
        for page in pages {
            let render = CommandRunner.run(CommandRunner.packageRoot.appendingPathComponent("scripts/render-man").path,
                                           [Self.manDirectory + "/" + page])
            #expect(render.succeeded && render.stdout.hasPrefix(".\\\""), "\(page): \(render.stderr)")
            try render.stdout.write(toFile: rendered, atomically: true, encoding: .utf8)
            let lint = CommandRunner.run("mandoc", ["-T", "lint", "-W", "all", rendered])
            #expect(lint.succeeded && lint.stdout.isEmpty && lint.stderr.isEmpty, "\(page): \(lint.stdout)\(lint.stderr)")
        }
    }

    @Test("every page has FILES and EXAMPLES, the tools' pages ENVIRONMENT, and apropos finds each")
    func sectionsAndApropos() throws {
        let pages = try FileManager.default.contentsOfDirectory(atPath: Self.manDirectory).filter { $0.hasSuffix(".scd") }
        let tree = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-mandb-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: tree) }
        for page in pages {
            let text = try String(contentsOfFile: Self.manDirectory + "/" + page, encoding: .utf8)
            let name = String(page.dropLast(".scd".count))
            var wanted = ["# NAME", "# FILES", "# EXAMPLES"]
            if name != "pam_protfs.8" { wanted.append("# ENVIRONMENT") }  // a PAM module reads none
            for section in wanted { #expect(text.contains("\n" + section + "\n"), "\(page) has no \(section)") }
            let section = tree + "/man" + name.split(separator: ".").last!
            try FileManager.default.createDirectory(atPath: section, withIntermediateDirectories: true)
            let render = CommandRunner.run(CommandRunner.packageRoot.appendingPathComponent("scripts/render-man").path,
                                           [Self.manDirectory + "/" + page])
            try render.stdout.write(toFile: section + "/" + name, atomically: true, encoding: .utf8)
        }
        // What scripts/setup does after installing them: index the tree, as man-db's daily run would.
        let index = CommandRunner.run("mandb", ["-q", tree])
        #expect(index.succeeded, "\(index.stderr)")
        let found = CommandRunner.run("apropos", ["-M", tree, "protfs"]).stdout
        for page in pages {
            let title = page.dropLast(".scd".count).split(separator: ".").dropLast().joined(separator: ".")
            #expect(found.contains("\(title) ("), "apropos protfs does not find \(title): \(found)")
        }
    }

    /// The options in a piece of text: `-x` or `--name`, not inside a word.
    static func options(in text: some StringProtocol) -> Set<String> {
        Set(String(text).matches(of: /(?:^|[^\w-])(--?[a-zA-Z][\w-]*)/).map { String($0.output.1) })
    }

    /// The commands and options of `tool --help`: each usage line's words up to the first
    /// operand or option, and every option of any line.
    static func help(_ tool: String) -> (commands: Set<String>, options: Set<String>) {
        let result = CommandRunner.run(CommandRunner.builtExecutable(tool), ["--help"])
        let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  \(tool) ") }
        let commands = lines.map { line in
            line.split(separator: " ").dropFirst().prefix { $0.allSatisfy { $0.isLowercase || $0 == "-" } }.joined(separator: " ")
        }
        return (Set(commands), lines.reduce(into: Set()) { $0.formUnion(options(in: $1)) })
    }

    /// A page's commands: the bold words that open each term of its COMMANDS section; its
    /// options: every bold option anywhere.
    static func manual(_ name: String) throws -> (commands: Set<String>, options: Set<String>) {
        let text = try page(name)
        let section = text.components(separatedBy: "# COMMANDS").dropFirst().first?.components(separatedBy: "\n# ").first ?? ""
        let commands = section.split(separator: "\n").filter { $0.hasPrefix("*") }.map { term in
            term.matches(of: /\*([a-z][\w -]*)\*/).first.map { String($0.output.1) } ?? ""
        }
        let bold = text.matches(of: /\*(--?[a-zA-Z][\w-]*)\*/).map { String($0.output.1) }
        return (Set(commands), Set(bold).subtracting(["--help", "--version"]))
    }

    @Test("protfs(8) and protfsctl(1) have exactly the commands and options of --help", arguments: [
        ("protfs", "protfs.8"), ("protfsctl", "protfsctl.1"),
    ])
    func agreesWithHelp(tool: String, page: String) throws {
        let help = Self.help(tool), manual = try Self.manual(page)
        #expect(help.commands.count >= 5 && help.options.count >= 5, "\(help)")
        #expect(help.commands.subtracting(manual.commands).isEmpty, "in --help, not in \(page): \(help.commands.subtracting(manual.commands))")
        #expect(manual.commands.subtracting(help.commands).isEmpty, "in \(page), not in --help: \(manual.commands.subtracting(help.commands))")
        #expect(help.options.subtracting(manual.options).isEmpty, "in --help, not in \(page): \(help.options.subtracting(manual.options))")
        #expect(manual.options.subtracting(help.options).isEmpty, "in \(page), not in --help: \(manual.options.subtracting(help.options))")
    }

    @Test("mount.protfs(8) has exactly the mount options protfs mount parses")
    func mountOptionsAgree() throws {
        let source = try String(contentsOf: CommandRunner.packageRoot.appendingPathComponent("Sources/protfs/MountOptions.swift"),
                                encoding: .utf8)
        // The names of the `case "name"` lines of the option switch; the ones protfs sets itself are not the user's.
        let parsed = Set(source.matches(of: /case ((?:"[a-z_]+"(?:, )?)+):/).flatMap { match in
            match.output.1.matches(of: /"([a-z_]+)"/).map { String($0.output.1) }
        }).subtracting(["default_permissions", "auto_unmount", "subtype", "fsname"])
        #expect(parsed.count > 10, "\(parsed)")
        let text = try Self.page("mount.protfs.8").replacingOccurrences(of: "\\_", with: "_")
        let section = text.components(separatedBy: "# OPTIONS").dropFirst().first?.components(separatedBy: "\n# ").first ?? ""
        let documented = Set(section.matches(of: /\*([a-z_]+)\*/).map { String($0.output.1) })
        #expect(parsed.subtracting(documented).isEmpty, "parsed, not in mount.protfs(8): \(parsed.subtracting(documented))")
        #expect(documented.subtracting(parsed).isEmpty, "in mount.protfs(8), not parsed: \(documented.subtracting(parsed))")
    }
}
