import Foundation

// Options held in a constant: Linux Foundation ignores the protection bit.
let secret: Data.WritingOptions = [.atomic, .completeFileProtection]
let url = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "/dev/null")
try Data("x".utf8).write(to: url, options: secret)
