/// Options and operands of one command line. Options may come before or after operands;
/// `--` ends the options.
public struct ParsedArguments {
    public private(set) var operands: [String] = []
    private var values: [String: String] = [:]
    private var setFlags: Set<String> = []

    public init(_ arguments: [String], valueOptions: Set<String>, flags: Set<String>) throws(UsageError) {
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
            if ["--help", "-h"].contains(name) && !valueOptions.contains(name) && !flags.contains(name) {
                throw UsageError.helpRequested
            }
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

    public func value(_ option: String) -> String? { values[option] }

    public func isSet(_ flag: String) -> Bool { setFlags.contains(flag) }

    /// The operands, which must be exactly `names` (for the message when they are not).
    public func operands(_ names: String...) throws(UsageError) -> [String] {
        guard operands.count == names.count else {
            if operands.count < names.count { throw UsageError("missing \(names[operands.count])") }
            throw UsageError("unexpected argument '\(operands[names.count])'")
        }
        return operands
    }

    /// The operands when the last of `names` may repeat (`PATH...`): at least one of each.
    public func variadicOperands(_ names: String...) throws(UsageError) -> [String] {
        guard operands.count >= names.count else { throw UsageError("missing \(names[operands.count])") }
        return operands
    }
}
