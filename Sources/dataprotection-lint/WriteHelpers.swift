/// Functions whose writing-options parameter reaches a `Data.write(to:options:)` inside
/// them, directly or through other such functions: a call that passes protection through one
/// protects nothing, and the line to change is the write, which the report names, with the
/// call that passed it.
struct WriteHelpers {
    let files: [SourceFile]
    let calls: [[Call]]
    let facts: PackageFacts

    /// A write fed by a parameter of a function (the write's own, or one that passes the
    /// parameter on to a function that feeds it).
    private struct Helper {
        let function: FunctionDeclaration
        let functionPath: String
        let parameterIndex: Int
        let file: SourceFile
        let write: Call
        var parameter: FunctionDeclaration.Parameter { function.parameters[parameterIndex] }

        func isSame(as other: Helper) -> Bool {
            functionPath == other.functionPath && function.bodyStart == other.function.bodyStart && parameterIndex == other.parameterIndex
                && file.path == other.file.path && write.nameStart == other.write.nameStart
        }
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

    /// Each write whose `options:` uses a parameter of type `WritingOptions` of the function
    /// around it, then each function that passes such a parameter of its own to one of those,
    /// until no more are found.
    private func helpers() -> [Helper] {
        let declared = files.map(FunctionDeclaration.all(in:))
        var helpers: [Helper] = []
        var added: [Helper] = []
        for (file, (fileCalls, functions)) in zip(files, zip(calls, declared)) {
            for function in functions {
                for (index, parameter) in optionsParameters(of: function) {
                    for call in fileCalls where call.name == "write" && function.encloses(call)
                        && (call.arguments.hasPrefix("to:") || call.arguments.hasPrefix("toFile:"))
                        && uses(call.argument("options"), parameter) {
                        added.append(Helper(function: function, functionPath: file.path, parameterIndex: index, file: file, write: call))
                    }
                }
            }
        }
        while !added.isEmpty {
            helpers += added
            let inner = added
            added = []
            for (file, (fileCalls, functions)) in zip(files, zip(calls, declared)) {
                for function in functions {
                    for (index, parameter) in optionsParameters(of: function) {
                        for helper in inner {
                            for call in fileCalls where call.name == helper.function.name && function.encloses(call)
                                && uses(argument(of: call, for: helper), parameter) {
                                let outer = Helper(function: function, functionPath: file.path, parameterIndex: index,
                                                   file: helper.file, write: helper.write)
                                if !(helpers + added).contains(where: { $0.isSame(as: outer) }) { added.append(outer) }
                            }
                        }
                    }
                }
            }
        }
        return helpers
    }

    private func optionsParameters(of function: FunctionDeclaration) -> [(Int, FunctionDeclaration.Parameter)] {
        function.parameters.enumerated().filter { $0.element.type.contains("WritingOptions") }.map { ($0.offset, $0.element) }
    }

    private func uses(_ value: Substring?, _ parameter: FunctionDeclaration.Parameter) -> Bool {
        value.map { Expression.names(in: $0).contains(String(parameter.name)) } ?? false
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
