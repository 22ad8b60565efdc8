import Foundation
import ProtfsDomain
import Testing
@testable import DataProtection
@testable import DataProtectionFiles

@Suite struct WritingOptionsTests {
    @Test func eachProtectionBitAsksForItsClass() throws {
        let expected: [(Data.WritingOptions, FileProtectionType?)] = [
            ([], nil),
            ([.atomic, .withoutOverwriting], nil),
            (.completeFileProtection, .complete),
            ([.atomic, .completeFileProtectionUnlessOpen], .completeUnlessOpen),
            ([.withoutOverwriting, .completeFileProtectionUntilFirstUserAuthentication], .completeUntilFirstUserAuthentication),
            (.noFileProtection, FileProtectionType.none),
        ]
        for (options, protection) in expected {
            #expect(try options.requestedProtection().map(FileProtectionType.init)?.rawValue == protection?.rawValue, "\(options.rawValue)")
        }
    }

    @Test func protectionBitsAreAValueNotFlags() {
        // 0x5 in the mask's nibble is no class: refused, not read as .completeFileProtection.
        let stray = Data.WritingOptions(rawValue: 0x5000_0000)
        #expect(throws: DataProtectionError.self) { try stray.requestedProtection() }
        #expect(Data.WritingOptions([.atomic, .completeFileProtection]).withoutProtection == .atomic)
    }

    @Test func attributeValuesAreFoundationsTypesOrTheirNames() throws {
        for type in [FileProtectionType.complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication, .none] {
            #expect(try FileProtectionType(protectionClass(ofAttribute: type)).rawValue == type.rawValue)
            #expect(try FileProtectionType(protectionClass(ofAttribute: type.rawValue)).rawValue == type.rawValue)
        }
        #expect(throws: DataProtectionError.unknownProtection("complete")) { try protectionClass(ofAttribute: "complete") }
        // The message lists only what is accepted: each name it gives is one.
        let message = DataProtectionError.unknownProtection("complete").description
        #expect(!message.contains("(complete,"))
        for name in ProtectionClass.allCases.map(\.appleName) {
            #expect(message.contains(name))
            #expect(try protectionClass(ofAttribute: name).appleName == name)
        }
        #expect(throws: DataProtectionError.self) { try protectionClass(ofAttribute: 1) }
    }

    @Test func temporaryFilesAreHiddenBesideTheTarget() {
        let temporary = ProtectedWrite.temporaryPath(beside: "/mnt/dir/file.txt")
        #expect(temporary.hasPrefix("/mnt/dir/.file.txt.protfs-"))
        #expect(temporary.hasSuffix(".tmp"))
        #expect(temporary != ProtectedWrite.temporaryPath(beside: "/mnt/dir/file.txt"))
    }
}
