import Foundation

/// Scripts the integration tests run, kept as files in `Scripts/` next to the tests.
enum TestScripts {
    static func path(_ name: String, testFile: String = #filePath) -> String {
        (testFile as NSString).deletingLastPathComponent + "/Scripts/" + name
    }
}
