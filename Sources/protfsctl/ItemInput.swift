import Foundation
import Glibc
import ProtfsCommandLine
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// What `protfsctl item` takes from its command line and its input: the identity and
/// attributes from options, the secret from a file or standard input, byte-exact, straight
/// into locked memory (never from argv or the environment).
struct ItemInput {
    let arguments: ParsedArguments

    var mountpoint: String { get throws { try arguments.operands("MOUNTPOINT")[0] } }

    func required(_ option: String) throws(UsageError) -> String {
        guard let value = arguments.value(option) else { throw UsageError("missing \(option)") }
        return value
    }

    /// `--uid UID`: root acting for another owner.
    var uid: UInt32? {
        get throws(UsageError) {
            guard let text = arguments.value("--uid") else { return nil }
            guard let uid = UInt32(text) else { throw UsageError("--uid needs a numeric uid, not '\(text)'") }
            return uid
        }
    }

    /// `--accessible V`, with a warning for the values Apple deprecated.
    var accessibility: ItemAccessibility? {
        get throws(UsageError) {
            guard let text = arguments.value("--accessible") else { return nil }
            guard let value = ItemAccessibility(spelling: text) else {
                let names = ItemAccessibility.allCases.map(\.name).joined(separator: ", ")
                throw UsageError("unknown accessibility '\(text)'; use one of \(names), or their kSecAttrAccessible names")
            }
            if value.isDeprecated {
                writeError("protfsctl item: warning: \(value.name) (\(value.appleName)) is deprecated by Apple: the secret is "
                           + "readable in every lock state, even before the first unlock; prefer afterFirstUnlock\n")
            }
            return value
        }
    }

    /// `--attributes JSON`: the lookup attributes (Secret Service attributes), a JSON object of
    /// strings such as `{"xdg:schema":"org.example.Password","user":"alice"}`.
    var lookupAttributes: [String: String]? {
        get throws(UsageError) {
            guard let text = arguments.value("--attributes") else { return nil }
            guard let map = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) else {
                throw UsageError("--attributes needs a JSON object of strings, such as '{\"user\":\"alice\"}'")
            }
            return map
        }
    }

    /// `--generic-file F`: the generic attribute's bytes.
    var generic: [UInt8]? {
        get throws {
            guard let path = arguments.value("--generic-file") else { return nil }
            let bytes = try Self.readFile(path, limit: ItemLimits.maximumGenericLength, what: "generic attribute")
            defer { bytes.wipe() }
            return bytes.withUnsafeBytes { Array($0) }
        }
    }

    /// The secret from `--secret-file`, else standard input, all of it, nothing stripped.
    func secret() throws -> SecureBuffer {
        try Self.readFile(arguments.value("--secret-file"), limit: ItemLimits.maximumSecretLength, what: "secret")
    }

    /// Reads a whole file (or standard input when `path` is nil) into locked memory; more
    /// than `limit` bytes is a usage error.
    private static func readFile(_ path: String?, limit: Int, what: String) throws -> SecureBuffer {
        guard let path else { return try read(FileDescriptor(rawValue: STDIN_FILENO), limit: limit, what: what) }
        let opened: OwnedDescriptor
        do { opened = try OwnedDescriptor.open(path: path, .readOnly) } catch {
            throw ItemInputError(message: "cannot open \(path): \(error)")
        }
        return try read(opened.borrowed, limit: limit, what: what)
    }

    private static func read(_ file: FileDescriptor, limit: Int, what: String) throws -> SecureBuffer {
        let staging = SecureBuffer(count: limit + 1)
        var total = 0
        while total <= limit {
            let n: Int
            do {
                n = try staging.withUnsafeMutableBytes { (buffer) throws(Errno) in
                    try syscallRetrying { Glibc.read(file.rawValue, buffer.baseAddress! + total, buffer.count - total) }
                }
            } catch {
                throw ItemInputError(message: "cannot read the \(what): \(error)")
            }
            if n == 0 { break }
            total += n
        }
        guard total <= limit else {
            let advice = what == "secret" ? "; keep it in a file of the same class instead" : ""
            throw UsageError("the \(what) has more than \(limit) bytes, the most an item holds\(advice)")
        }
        return staging.prefix(total)
    }
}

/// Input that could not be read (exit 1).
struct ItemInputError: CommandError {
    let message: String
    var exitCode: ExitCode { .failure }
    var description: String { message }
}
