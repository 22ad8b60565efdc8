import Foundation

// dataprotection-lint [--build-output FILE] PATH...: lists each call in the Swift files (or
// the trees of Swift files) given that would compile on Linux, return success and protect
// nothing, with what to write instead, as compiler warnings (`FILE:LINE:COLUMN: warning:`).
// The files are read together, as one module: names are resolved across them. Exits 1 when
// it found any, 0 when none, 2 when it could not read a path. With --build-output (the
// build-tool plugin's form) it also writes FILE, a Swift file with nothing to compile that
// the build depends on, and exits 0 after warnings: the build goes on and shows them.

var arguments = Array(CommandLine.arguments.dropFirst())
guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
    print("usage: dataprotection-lint [--build-output FILE] PATH...\n"
          + "Lists the calls in Swift files that set no file protection class on Linux, with their replacement.\n"
          + "Exit status: 0 none found, 1 found, 2 a path could not be read.")
    exit(arguments.isEmpty ? 2 : 0)
}
var buildOutput: String?
if arguments.first == "--build-output", arguments.count >= 2 {
    buildOutput = arguments[1]
    arguments.removeFirst(2)
}

var files: [SourceFile] = []
var unreadable = false
for path in arguments {
    for file in SwiftFiles.under(path) {
        guard let data = FileManager.default.contents(atPath: file) else {
            FileHandle.standardError.write(Data("dataprotection-lint: cannot read \(file)\n".utf8))
            unreadable = true
            continue
        }
        files.append(SourceFile(path: file, source: String(decoding: data, as: UTF8.self)))
    }
}
let found = SilentCall.find(in: files)
for call in found { print(call.diagnostic) }
if let buildOutput {
    let note = "// dataprotection-lint checked \(files.count) files and found \(found.count) silent calls.\n"
    guard FileManager.default.createFile(atPath: buildOutput, contents: Data(note.utf8)) else {
        FileHandle.standardError.write(Data("dataprotection-lint: cannot write \(buildOutput)\n".utf8))
        exit(2)
    }
    exit(unreadable ? 2 : 0)
}
exit(unreadable ? 2 : found.isEmpty ? 0 : 1)
