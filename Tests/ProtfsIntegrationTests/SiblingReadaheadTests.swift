import Foundation
import ProtfsTestSupport
import Testing

/// Cold reads of a directory's small files, one after another: the daemon reads the next
/// files' backing objects ahead.
@Suite("Reading a directory's next files ahead", .serialized)
struct SiblingReadaheadTests {
    @Test("the second open in a directory brings its next files' backing objects into memory, bounded; one open alone does not")
    func nextFilesAreReadAhead() throws {
        let vault = try TestVault()
        try vault.mount()
        let arguments = [vault.mountpoint, vault.backing, TestVault.protfsctl]
        let made = CommandRunner.script("requests/sibling-readahead.py", ["make"] + arguments)
        try #require(made.succeeded, "\(made.stderr)")
        // A fresh mount: the kernel knows no file, each is looked up and opened anew.
        try vault.unmount()
        try vault.mount()
        defer { try? vault.unmount() }
        let checked = CommandRunner.script("requests/sibling-readahead.py", ["check"] + arguments)
        #expect(checked.succeeded, "\(checked.stdout)\(checked.stderr)")
    }
}
