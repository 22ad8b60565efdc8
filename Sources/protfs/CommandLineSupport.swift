import CProtfsSys
import ProtfsCore

/// One subcommand: how it is called and what it does. `run` throws `UsageError` (exit 2)
/// or `VaultError` (its own exit code); anything else exits 1.
struct Command: Sendable {
    let name: String
    /// The arguments after the name, as the usage line shows them.
    let synopsis: String
    /// Options that take a value (`--name VALUE` or `--name=VALUE`).
    let valueOptions: Set<String>
    /// Options that take none.
    let flags: Set<String>
    let run: @Sendable (ParsedArguments) throws -> Void

    init(name: String, synopsis: String, valueOptions: Set<String> = [], flags: Set<String> = [],
         run: @escaping @Sendable (ParsedArguments) throws -> Void) {
        self.name = name
        self.synopsis = synopsis
        self.valueOptions = valueOptions
        self.flags = flags
        self.run = run
    }

    func execute(_ arguments: [String]) -> Int32 {
        do {
            try run(try ParsedArguments(arguments, valueOptions: valueOptions, flags: flags))
            return ExitCode.success.rawValue
        } catch let exit as CommandExit {
            return exit.code.rawValue
        } catch let error as UsageError {
            writeError("protfs \(name): \(error.message)\nusage: protfs \(name) \(synopsis)\n")
            return ExitCode.usage.rawValue
        } catch let error as VaultError {
            writeError("protfs \(name): \(error)\n")
            return error.exitCode.rawValue
        } catch {
            writeError("protfs \(name): \(error)\n")
            return ExitCode.failure.rawValue
        }
    }
}

/// A command that has already said what went wrong and only needs to exit with `code`.
struct CommandExit: Error {
    let code: ExitCode
}

/// A mistake in how a command was called (exit 2); the message names the culprit.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Options and operands of one command line. Options may come before or after operands;
/// `--` ends the options.
struct ParsedArguments {
    private(set) var operands: [String] = []
    private(set) var values: [String: String] = [:]
    private(set) var setFlags: Set<String> = []

    init(_ arguments: [String], valueOptions: Set<String>, flags: Set<String>) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                operands += rest
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                operands.append(argument)
                continue
            }
            let (name, inlineValue) = Self.split(argument)
            if valueOptions.contains(name) {
                guard let value = inlineValue ?? rest.popFirst() else { throw UsageError("option \(name) needs a value") }
                guard values[name] == nil else { throw UsageError("option \(name) given twice") }
                values[name] = value
            } else if flags.contains(name), inlineValue == nil {
                setFlags.insert(name)
            } else {
                throw UsageError(flags.contains(name) ? "option \(name) takes no value" : "unknown option '\(name)'")
            }
        }
    }

    /// `--name=value` -> (`--name`, `value`).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    func value(_ option: String) -> String? { values[option] }

    func isSet(_ flag: String) -> Bool { setFlags.contains(flag) }

    /// The operands, which must be exactly `names` (for the message when they are not).
    func operands(_ names: String...) throws -> [String] {
        guard operands.count == names.count else {
            if operands.count < names.count { throw UsageError("missing \(names[operands.count])") }
            throw UsageError("unexpected argument '\(operands[names.count])'")
        }
        return operands
    }
}

/// Messages go to stderr without touching the C `stderr` global.
func writeError(_ message: String) {
    let bytes = Array(message.utf8)
    bytes.withUnsafeBufferPointer { b in
        b.withMemoryRebound(to: CChar.self) { protfs_write_stderr($0.baseAddress, $0.count) }
    }
}
