import Foundation

// dataprotection-lint PATH...: lists each call in the Swift files (or the trees of Swift
// files) given that would compile on Linux, return success and protect nothing, with what to
// write instead. Exits 1 when it found any, 0 when none, 2 when it could not read a path.

let arguments = Array(CommandLine.arguments.dropFirst())
guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
    print("usage: dataprotection-lint PATH...\n"
          + "Lists the calls in Swift files that set no file protection class on Linux, with their replacement.\n"
          + "Exit status: 0 none found, 1 found, 2 a path could not be read.")
    exit(arguments.isEmpty ? 2 : 0)
}

var found = 0
var unreadable = false
for path in arguments {
    for file in SwiftFiles.under(path) {
        guard let data = FileManager.default.contents(atPath: file) else {
            FileHandle.standardError.write(Data("dataprotection-lint: cannot read \(file)\n".utf8))
            unreadable = true
            continue
        }
        for call in SilentCall.find(in: String(decoding: data, as: UTF8.self)) {
            print("\(file):\(call.line):\(call.column): \(call.replacement)")
            found += 1
        }
    }
}
exit(unreadable ? 2 : found > 0 ? 1 : 0)
