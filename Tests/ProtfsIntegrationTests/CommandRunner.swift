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

    /// The freshly built executables (the test command builds them before testing).
    static func builtExecutable(_ name: String) -> String {
        for configuration in ["debug", "release"] {
            let path = packageRoot.appendingPathComponent(".build/\(configuration)/\(name)").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return packageRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: String? = nil,
                    environment: [String: String]? = nil, timeout: TimeInterval = 60) -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        let lock = NSLock()
        for (pipe, isOut) in [(outPipe, true), (errPipe, false)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                lock.lock()
                if isOut { outData = data } else { errData = data }
                lock.unlock()
                group.leave()
            }
        }
        do {
            try process.run()
        } catch {
            return CommandResult(status: 127, stdout: "", stderr: "cannot run \(executable): \(error)")
        }
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = group.wait(timeout: .now() + 5)
            return CommandResult(status: -1, stdout: String(decoding: outData, as: UTF8.self),
                                 stderr: "timed out after \(timeout) s")
        }
        process.waitUntilExit()
        _ = group.wait(timeout: .now() + 5)
        lock.lock()
        defer { lock.unlock() }
        return CommandResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a shell snippet (for pipelines such as `cp -a ... && diff -r ...`).
    @discardableResult
    static func shell(_ script: String, timeout: TimeInterval = 120) -> CommandResult {
        run("/bin/bash", ["-c", script], timeout: timeout)
    }
}
