@testable import dataprotection_lint
import Testing

/// The paths by which protection reaches a call that ignores it, resolved across the files of
/// one module: each is reported at the line to change.
@Suite struct ResolutionTests {
    /// The reported lines of one file's calls.
    static func lines(_ source: String) -> [Int] { SilentCall.find(in: source).map(\.line) }

    static func lines(_ files: [(String, String)]) -> [String] {
        SilentCall.find(in: files.map { SourceFile(path: $0.0, source: $0.1) }).map { "\($0.path):\($0.line)" }
    }

    @Test func optionsHeldInAConstant() {
        let source = """
            import DataProtection
            let opts: Data.WritingOptions = [.atomic, .completeFileProtection]
            func save(_ data: Data, to url: URL) throws {
                try data.write(to: url, options: opts)
                try data.writeProtected(to: url, options: opts)
            }
            """
        #expect(Self.lines(source) == [4])
    }

    @Test func optionsHeldInAConstantOfAnotherFile() {
        let constants = "import Foundation\nenum Storage { static let secret: Data.WritingOptions = .completeFileProtectionUnlessOpen }\n"
        let writer = "import Foundation\nfunc save(_ data: Data, to url: URL) throws {\n    try data.write(to: url, options: Storage.secret)\n}\n"
        #expect(Self.lines([("Constants.swift", constants), ("Writer.swift", writer)]) == ["Writer.swift:3"])
    }

    @Test func optionsPassedThroughAHelperAreReportedAtTheHelpersWrite() {
        let helper = """
            import Foundation
            func persist(_ data: Data, at url: URL, options: Data.WritingOptions) throws {
                try data.write(to: url, options: options)
            }
            """
        let caller = "import Foundation\nfunc keep(_ data: Data, _ url: URL) throws {\n    try persist(data, at: url, options: .completeFileProtection)\n}\n"
        let found = SilentCall.find(in: [SourceFile(path: "Helper.swift", source: helper), SourceFile(path: "Caller.swift", source: caller)])
        #expect(found.map { "\($0.path):\($0.line)" } == ["Helper.swift:3"])
        #expect(found.first?.replacement.contains("the call at Caller.swift:3") == true)
    }

    @Test func optionsPassedThroughTwoHelpers() {
        let source = """
            import Foundation
            func persist(_ data: Data, at url: URL, options: Data.WritingOptions) throws {
                try data.write(to: url, options: options)
            }
            func store(_ data: Data, _ url: URL, _ mode: Data.WritingOptions) throws {
                try persist(data, at: url, options: mode)
            }
            func keep(_ data: Data, _ url: URL) throws {
                try store(data, url, [.atomic, .completeFileProtectionUnlessOpen])
            }
            """
        let found = SilentCall.find(in: source, path: "Store.swift")
        #expect(found.map(\.line) == [3])
        #expect(found.first?.replacement.contains("the call at Store.swift:9 passing them through store(...)") == true)
    }

    @Test func aHelpersProtectingDefaultIsReported() {
        let source = """
            import Foundation
            func persist(_ data: Data, to url: URL, _ options: Data.WritingOptions = [.atomic, .completeFileProtection]) throws {
                try data.write(to: url, options: options)
            }
            """
        #expect(Self.lines(source) == [3])
    }

    @Test func aHelperCalledWithoutProtectionIsQuiet() {
        let source = """
            import Foundation
            func persist(_ data: Data, to url: URL, options: Data.WritingOptions) throws {
                try data.write(to: url, options: options)
            }
            func cache(_ data: Data, _ url: URL) throws { try persist(data, to: url, options: .atomic) }
            """
        #expect(Self.lines(source).isEmpty)
    }

    @Test func rawValuesWithAProtectionBit() {
        let source = """
            import Foundation
            func save(_ data: Data, to url: URL) throws {
                try data.write(to: url, options: Data.WritingOptions(rawValue: 0x2000_0000))
                try data.write(to: url, options: .init(rawValue: Data.WritingOptions.completeFileProtection.rawValue | 1))
                try data.write(to: url, options: Data.WritingOptions(rawValue: 1))
            }
            """
        #expect(Self.lines(source) == [3, 4])
    }

    @Test func attributesBuiltElsewhereInAFileWithoutTheImport() {
        let source = """
            import Foundation
            func make(_ path: String) {
                var attrs: [FileAttributeKey: Any] = [:]
                attrs[.protectionKey] = FileProtectionType.complete
                FileManager.default.createFile(atPath: path, contents: nil, attributes: attrs)
            }
            """
        #expect(Self.lines(source) == [5])
    }

    @Test func theImportIsPerFile() {
        let protected = "import DataProtection\nfunc a(_ path: String) throws {\n    try FileManager.default.setAttributes([.protectionKey: FileProtectionType.complete], ofItemAtPath: path)\n}\n"
        let plain = """
            import Foundation
            func b(_ path: String) throws {
                FileManager.default.createFile(atPath: path, contents: nil, attributes: [.protectionKey: FileProtectionType.complete])
                try FileManager.default.setAttributes([FileAttributeKey.protectionKey: FileProtectionType.complete], ofItemAtPath: path)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                        attributes: [.protectionKey: FileProtectionType.complete])
                _ = try FileManager.default.attributesOfItem(atPath: path)[.protectionKey]
            }
            """
        #expect(Self.lines([("A.swift", protected), ("B.swift", plain)]) == ["B.swift:3", "B.swift:4", "B.swift:5", "B.swift:7"])
    }

    @Test func foundationsManagerSpelledOutIgnoresTheKeyEvenWithTheImport() {
        let source = "import DataProtection\nfunc a(_ path: String) throws {\n"
            + "    try Foundation.FileManager.default.setAttributes([.protectionKey: FileProtectionType.complete], ofItemAtPath: path)\n}\n"
        #expect(Self.lines(source) == [3])
    }

    @Test func resourceValuesBuiltElsewhere() {
        let source = """
            import DataProtection
            func protectedValues() -> URLResourceValues {
                var values = URLResourceValues()
                values.fileProtection = .complete
                return values
            }
            func apply(_ url: URL) throws {
                var url = url
                let values = protectedValues()
                try url.setResourceValues(values)
            }
            """
        #expect(Self.lines(source) == [10])
    }

    @Test func nsurlsDictionaryFormAndValuesThatLoseTheirType() {
        let source = """
            import DataProtection
            func apply(_ url: URL) throws {
                try (url as NSURL).setResourceValues([.fileProtectionKey: URLFileProtection.complete])
                var resources: [URLResourceKey: Any] = [:]
                resources[.fileProtectionKey] = URLFileProtection.complete
                try (url as NSURL).setResourceValues(resources)
                try (url as NSURL).setResourceValue(URLFileProtection.complete.rawValue, forKey: .fileProtectionKey)
                try (url as NSURL).setResourceValue(URLFileProtection.complete as Any, forKey: .fileProtectionKey)
                let maybe: URLFileProtection? = .complete
                try (url as NSURL).setResourceValue(maybe, forKey: .fileProtectionKey)
            }
            """
        #expect(Self.lines(source) == [3, 6, 7, 8, 10])
    }

    @Test func setResourceValueInAFileWithoutTheImportSetsNothing() {
        let source = "import Foundation\nfunc apply(_ url: URL) throws {\n"
            + "    try (url as NSURL).setResourceValue(URLFileProtection.complete, forKey: .fileProtectionKey)\n}\n"
        #expect(Self.lines(source) == [3])
    }

    @Test func copyInAFileWithoutTheImportOfAModuleThatProtects() {
        let protected = "import DataProtection\nlet classes: Set<FileProtectionType> = [.complete]\n"
        let plain = "import Foundation\nfunc duplicate(_ a: String, _ b: String) throws {\n    try FileManager.default.copyItem(atPath: a, toPath: b)\n}\n"
        #expect(Self.lines([("A.swift", protected), ("B.swift", plain)]) == ["B.swift:3"])
        #expect(Self.lines([("B.swift", plain)]).isEmpty)
    }
}
