import Foundation
import Testing

/// The scripts the tests run live in a folder per feature of `Scripts/`, and every name that
/// points at one (from a test, from another script beside it) names a file that is there: a
/// script moved or renamed fails here, not as a test that cannot start its client.
@Suite("script layout")
struct ScriptLayoutTests {
    static let scriptsDirectory = CommandRunner.scriptPath("")

    /// Every file in the feature folders, as `folder/name`, sorted.
    static func scriptFiles() throws -> [String] {
        var files: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: scriptsDirectory).sorted() {
            let path = scriptsDirectory + "/" + folder
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files.append(folder + "/" + name)
                }
            }
        }
        return files.sorted()
    }

    @Test("no script sits at the top of Scripts/: each is in the folder of its feature")
    func noScriptAtTheTop() throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: Self.scriptsDirectory) {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: Self.scriptsDirectory + "/" + entry, isDirectory: &isDirectory)
            #expect(isDirectory.boolValue, "Scripts/\(entry) is not in a feature folder")
        }
    }

    @Test("every script a test names exists")
    func testsNameScriptsThatExist() throws {
        let folders = Set(try FileManager.default.contentsOfDirectory(atPath: Self.scriptsDirectory))
        let testsDirectory = CommandRunner.packageRoot.appendingPathComponent("Tests/ProtfsIntegrationTests").path
        var named = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: testsDirectory) where file.hasSuffix(".swift") {
            let source = try String(contentsOfFile: testsDirectory + "/" + file, encoding: .utf8)
            for match in source.matches(of: /"([a-z-]+)\/([A-Za-z0-9_.-]+)"/) where folders.contains(String(match.output.1)) {
                named += 1
                let script = "\(match.output.1)/\(match.output.2)"
                #expect(FileManager.default.fileExists(atPath: Self.scriptsDirectory + "/" + script), "\(file) names Scripts/\(script), which is not there")
            }
        }
        #expect(named > 100, "the parse missed the tests' scripts (\(named) found)")
    }

    @Test("every script a script runs or imports from beside it exists there")
    func scriptsNameNeighboursThatExist() throws {
        let besideBash = /\$here\/([A-Za-z0-9_.-]+)/
        let besidePython = /os\.path\.abspath\(__file__\)\),\s*"([A-Za-z0-9_.-]+)"/
        let localImport = /(?m)^from ([a-z_]+) import/
        let scripts = try Self.scriptFiles()
        // The scripts' own Python modules (others come from the system or the tree's vectors).
        let ownModules = Set(scripts.map { ($0 as NSString).lastPathComponent }.filter { $0.hasSuffix(".py") })
        for script in scripts {
            let folder = (script as NSString).deletingLastPathComponent
            let source = try String(contentsOfFile: Self.scriptsDirectory + "/" + script, encoding: .utf8)
            var neighbours = source.matches(of: besideBash).map { String($0.output.1) }
                + source.matches(of: besidePython).map { String($0.output.1) }
            neighbours += source.matches(of: localImport).map { String($0.output.1) + ".py" }.filter(ownModules.contains)
            for neighbour in neighbours {
                #expect(FileManager.default.fileExists(atPath: "\(Self.scriptsDirectory)/\(folder)/\(neighbour)"),
                        "Scripts/\(script) uses \(neighbour) beside it, which is not there")
            }
        }
    }
}
