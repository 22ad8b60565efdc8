import Foundation
import ProtfsCore
import ProtfsDomain
import ProtfsTestSupport
import Testing

extension VaultFileSystemTests {
    /// What the backing directory shows of classes: nothing (docs/FORMAT.md).
    @Suite("classes in the backing directory")
    struct BackingClassesTests {
        @Test("no byte of a file header or a directory record tells its class")
        func classesNotInTheClear() throws {
            let vault = try VaultHarness()
            let names = (1...8).map { "n\($0)" }
            try vault.makeClassDirectories(holding: Dictionary(uniqueKeysWithValues: names.map { ($0, Array("contents of \($0)".utf8)) }))
            var headers: [ProtectionClass: [[UInt8]]] = [:]
            var records: [ProtectionClass: [[UInt8]]] = [:]
            for protectionClass in ProtectionClass.allCases {
                let directory = VaultHarness.classDirectory(protectionClass)
                for name in names {
                    try vault.makeDirectory("\(directory)/sub-\(name)")
                    let header = try #require(FileManager.default.contents(atPath: try vault.backingPath(of: "\(directory)/\(name)")))
                    let record = try #require(FileManager.default.contents(atPath: try vault.backingPath(of: "\(directory)/sub-\(name)") + "/protfs.dir"))
                    headers[protectionClass, default: []].append([UInt8](header.prefix(328)))
                    records[protectionClass, default: []].append([UInt8](record))
                }
            }
            #expect(tellingOffsets(Array(headers.values)) == [], "file headers")
            #expect(tellingOffsets(Array(records.values)) == [], "directory records")
            #expect(headers.values.joined().allSatisfy { $0[4] == 2 } && records.values.joined().allSatisfy { $0[8] == 2 }, "format 2")
        }
    }
}
