import Foundation
import ProtfsDomain
import Testing
import ProtfsControlProtocol

/// docs/CONTROL.md is where the wire grammar is written, once: these tests hold what it says
/// (the request and reply names, the lengths and limits) to the code's names and constants, so
/// that the one home cannot drift from what the daemon and the clients do.
@Suite struct ControlGrammarDocumentTests {
    static let document: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/CONTROL.md"), encoding: .utf8)) ?? ""
    }()

    /// The grammar: the first code block of "## Messages", its white space folded.
    static func grammar() throws -> String {
        let section = try #require(document.firstRange(of: "## Messages"), "docs/CONTROL.md has no \"Messages\"")
        let block = try #require(document[section.upperBound...].split(separator: "```").dropFirst().first)
        return block.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The prose, its white space folded (a claim may be broken across lines).
    static var prose: String { document.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    /// The whole number the first match of `pattern` captures.
    static func number(_ pattern: Regex<(Substring, Substring)>, in text: String) throws -> Int {
        let match = try #require(text.firstMatch(of: pattern), "docs/CONTROL.md no longer says \(pattern)")
        return try #require(Int(match.output.1))
    }

    @Test("the grammar names every request and reply kind the code knows, and no other")
    func namesMatch() throws {
        let grammar = try Self.grammar()
        let requests = Set(grammar.matches(of: /\{"request":"(\w+)"/).map { String($0.output.1) })
        let replies = Set(grammar.matches(of: /\{"reply":"(\w+)"/).map { String($0.output.1) })
        #expect(requests == Set(ControlRequestKind.allCases.map(\.rawValue)))
        #expect(replies == Set(ControlReplyKind.allCases.map(\.rawValue)))
    }

    @Test("the grammar's magic, lengths and limits are the code's")
    func grammarLimitsMatch() throws {
        let grammar = try Self.grammar()
        let magic = try #require(grammar.firstMatch(of: /magic := "(\w+)" 0x(\d\d)/))
        #expect(Array(magic.output.1.utf8) + [UInt8(magic.output.2, radix: 16)!] == ControlWire.magic)
        #expect(try Self.number(/header := u32 length \(1 \.\.\. (\d+)\)/, in: grammar) == ControlLimits.maximumHeaderLength)
        #expect(try Self.number(/reply := u32 length \(1 \.\.\. (\d+)\)/, in: grammar) == ControlLimits.maximumReplyLength)
        #expect(try Self.number(/passphrase 1 \.\.\. (\d+)/, in: grammar) == ControlLimits.maximumSecretLength)
        #expect(try Self.number(/item's secret 0 \.\.\. (\d+)/, in: grammar) == ItemLimits.maximumSecretLength)
        #expect(try Self.number(/secret in order, at most (\d+) MiB/, in: grammar) << 20 == ItemLimits.maximumMatchedSecretBytes)
    }

    @Test("the prose's limits are the code's")
    func proseLimitsMatch() throws {
        let prose = Self.prose
        #expect(try Self.number(/A request header is at most (\d+) KiB/, in: prose) << 10 == ControlLimits.maximumHeaderLength)
        #expect(try Self.number(/a reply at most (\d+) MiB/, in: prose) << 20 == ControlLimits.maximumReplyLength)
        #expect(try Self.number(/nesting deeper than (\d+)/, in: prose) == ControlLimits.maximumJSONDepth)
        #expect(.seconds(try Self.number(/not complete within (\d+) s/, in: prose)) == ControlLimits.requestTimeout)
    }
}
