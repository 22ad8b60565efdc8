/// Functions whose writing-options parameter reaches a `Data.write(to:options:)` inside
/// them: a call that passes protection through one protects nothing, and the line to change
/// is the write in the helper, which the report names, with the call that passed it.
struct WriteHelpers {
    let files: [SourceFile]
    let calls: [[Call]]
    let facts: PackageFacts

    /// A write fed by a parameter.
    private struct Helper {
        let function: FunctionDeclaration
        let parameterIndex: Int
        let file: SourceFile
        let write: Call
        var parameter: FunctionDeclaration.Parameter { function.parameters[parameterIndex] }
    }

    func silentWrites() -> [SilentCall] {
        var found: [SilentCall] = []
        for helper in helpers() {
            let parameter = helper.parameter
            if let defaultValue = parameter.defaultValue, facts.carriesProtection(defaultValue, file: helper.file, at: defaultValue.startIndex) {
                found.append(report(helper, because: "the default value of `\(parameter.name)` in \(helper.function.name)(...)"))
                continue
            }
            for (file, fileCalls) in zip(files, calls) {
                for call in fileCalls where call.name == helper.function.name {
                    guard let value = argument(of: call, for: helper), facts.carriesProtection(value, file: file, at: call.nameStart)
                    else { continue }
                    let (line, _) = file.position(of: call.nameStart)
                    found.append(report(helper, because: "the call at \(file.path):\(line) passing them through \(helper.function.name)(...)"))
                }
            }
        }
        return found
    }

    private func report(_ helper: Helper, because source: String) -> SilentCall {
        let replacement = helper.write.arguments.hasPrefix("toFile:") ? CallChecks.nsDataWriteReplacement : CallChecks.writeReplacement
        return SilentCall(helper.file, at: helper.write.nameStart, replacement + " (the protection options come from \(source))")
    }

    /// Each write whose `options:` uses a parameter of type `WritingOptions` of the function around it.
    private func helpers() -> [Helper] {
        var helpers: [Helper] = []
        for (file, fileCalls) in zip(files, calls) {
            for function in FunctionDeclaration.all(in: file) {
                let range = function.bodyStart..<function.body.endIndex
                for (index, parameter) in function.parameters.enumerated() where parameter.type.contains("WritingOptions") {
                    for call in fileCalls where call.name == "write" && range.contains(call.nameStart)
                        && (call.arguments.hasPrefix("to:") || call.arguments.hasPrefix("toFile:")) {
                        guard let options = call.argument("options"),
                              Expression.names(in: options).contains(String(parameter.name)) else { continue }
                        helpers.append(Helper(function: function, parameterIndex: index, file: file, write: call))
                    }
                }
            }
        }
        return helpers
    }

    /// The argument a call passes for the helper's parameter: by its label, or for an
    /// unlabelled one by its place among the arguments.
    private func argument(of call: Call, for helper: Helper) -> Substring? {
        let arguments = call.labelledArguments
        if let label = helper.parameter.label {
            return arguments.first { $0.label == label }?.value
        }
        let index = helper.parameterIndex
        guard index < arguments.count, arguments[index].label == nil else { return nil }
        return arguments[index].value
    }
}
