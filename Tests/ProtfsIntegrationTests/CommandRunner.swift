import Foundation

/// Runs a program with a deadline, so a bug can hang no test run.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
    var succeeded: Bool { status == 0 }
}

enum CommandRunner {
    /// The package root, found from this file's path (tests run from anywhere).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A script the tests run, kept in Scripts/ beside them.
    static func scriptPath(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/ProtfsIntegrationTests/Scripts/\(name)").path
    }

    /// The freshly built executables (the test command builds them before testing).
    static func builtExecutable(_ name: String) -> String {
        for configuration in ["debug", "release"] {
            let path = packageRoot.appendingPathComponent(".build/\(configuration)/\(name)").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return packageRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    /// Runs a script kept in `Scripts/` beside the tests: bash, or Python 3 for a `.py` one.
    static func script(_ name: String, _ arguments: [String], environment: [String: String]? = nil,
                       timeout: TimeInterval = 120) -> CommandResult {
        run(name.hasSuffix(".py") ? "python3" : "/bin/bash", [scriptPath(name)] + arguments,
            environment: environment, timeout: timeout)
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: String? = nil,
                    environment: [String: String]? = nil, timeout: TimeInterval = 60) -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        // Output goes to files, read once the process is gone: no reader threads to share.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-cmd-\(UUID().uuidString)")
        let outURL = scratch.appendingPathExtension("out"), errURL = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let inPipe = Pipe()
        guard let outHandle = try? FileHandle(forWritingTo: outURL), let errHandle = try? FileHandle(forWritingTo: errURL) else {
            return CommandResult(status: 127, stdout: "", stderr: "cannot create output files")
        }
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = inPipe
        do {
            try process.run()
        } catch {
            return CommandResult(status: 127, stdout: "", stderr: "cannot run \(executable): \(error)")
        }
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? outHandle.close()
        try? errHandle.close()
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        return CommandResult(status: timedOut ? -1 : process.terminationStatus, stdout: out,
                             stderr: timedOut ? "timed out after \(timeout) s\n" + err : err)
    }

    /// Runs a shell snippet (for pipelines such as `cp -a ... && diff -r ...`).
    @discardableResult
    static func shell(_ script: String, timeout: TimeInterval = 120) -> CommandResult {
        run("/bin/bash", ["-c", script], timeout: timeout)
    }

    /// Runs a Python 3 script with arguments: the client that holds descriptors and mappings
    /// open across a lock, which no shell command can.
    @discardableResult
    static func python(_ script: String, _ arguments: [String] = [], timeout: TimeInterval = 60) -> CommandResult {
        run("python3", ["-c", script] + arguments, timeout: timeout)
    }
}
