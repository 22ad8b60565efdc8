import PackagePlugin

/// Runs `dataprotection-lint` over a target's Swift files on every build that changes one of
/// them, so that each call that would protect nothing on Linux shows up as a compiler warning
/// at its line, with the replacement. Adopted with one line in the target's declaration:
/// `plugins: [.plugin(name: "DataProtectionLintPlugin", package: "protfs")]`.
///
/// The lint's output file is an empty Swift file the target compiles: that makes the build
/// depend on the check, which reruns whenever a source file changes.
@main
struct DataProtectionLintPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url)
        guard !sources.isEmpty else { return [] }
        let output = context.pluginWorkDirectoryURL.appending(path: "DataProtectionLintChecked.swift")
        return [.buildCommand(displayName: "Checking \(target.name) for file protection that Linux ignores",
                              executable: try context.tool(named: "dataprotection-lint").url,
                              arguments: ["--build-output", output.path] + sources.map(\.path),
                              inputFiles: sources, outputFiles: [output])]
    }
}
