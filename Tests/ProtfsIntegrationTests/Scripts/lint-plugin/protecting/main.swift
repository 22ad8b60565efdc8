import DataProtection
import Foundation

// The same iOS code, ported: each call protects on a protfs mount.
let secret: Data.WritingOptions = [.atomic, .completeFileProtection]
let url = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "/dev/null")
try Data("x".utf8).writeProtected(to: url, options: secret)
let protection: URLFileProtection = .complete
try (url as NSURL).setResourceValue(protection, forKey: .fileProtectionKey)
var attributes: [FileAttributeKey: Any] = [:]
attributes[.protectionKey] = FileProtectionType.complete
FileManager.default.createFile(atPath: url.path + ".copy", contents: nil, attributes: attributes)
