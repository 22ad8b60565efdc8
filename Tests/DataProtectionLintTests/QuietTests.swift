@testable import dataprotection_lint
import Testing

/// Code that protects, or that has nothing to protect, gets no report.
@Suite struct QuietTests {
    @Test func aTypedProtectionValueProtects() {
        let source = """
            import DataProtection
            func protect(_ url: URL, _ protection: URLFileProtection) throws {
                try (url as NSURL).setResourceValue(protection, forKey: .fileProtectionKey)
            }
            func protectAll(_ url: URL) throws {
                let chosen = URLFileProtection.completeUnlessOpen
                try (url as NSURL).setResourceValue(chosen, forKey: .fileProtectionKey)
                let typed: FileProtectionType = .complete
                try (url as NSURL).setResourceValue(typed, forKey: .fileProtectionKey)
                try (url as NSURL).setResourceValue(.complete, forKey: .fileProtectionKey)
                try (url as NSURL).setResourceValue(URLFileProtection(rawValue: "NSFileProtectionComplete"), forKey: .fileProtectionKey)
            }
            """
        #expect(SilentCall.find(in: source).isEmpty)
    }

    @Test func protectingCallsWithTheImport() {
        let source = """
            import DataProtection
            let opts: Data.WritingOptions = [.atomic, .completeFileProtection]
            func keep(_ data: Data, _ url: URL, _ path: String) throws {
                try data.writeProtected(to: url, options: opts)
                try data.write(to: url, options: .atomic)
                var attrs: [FileAttributeKey: Any] = [:]
                attrs[.protectionKey] = FileProtectionType.complete
                FileManager.default.createFile(atPath: path, contents: data, attributes: attrs)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: attrs)
                try FileManager.default.copyItem(atPath: path, toPath: path + ".copy")
                try url.setFileProtection(.complete)
                _ = try url.fileProtection
                _ = try FileManager.default.attributesOfItem(atPath: path)[.protectionKey]
                var values = URLResourceValues()
                values.isExcludedFromBackup = true
                var other = url
                try other.setResourceValues(values)
            }
            """
        #expect(SilentCall.find(in: source).isEmpty)
    }

    @Test func commentsAndStringsAreNotCode() {
        let source = """
            import Foundation
            // data.write(to: url, options: .completeFileProtection)
            let note = "try data.write(to: url, options: .completeFileProtection)"
            /* nested /* comment */ FileManager.default.createFile(atPath: p, contents: nil, attributes: [.protectionKey: x]) */
            """
        #expect(SilentCall.find(in: source).isEmpty)
    }
}
