import Glibc
import Testing
@testable import ProtfsCore
import ProtfsFormat
import ProtfsSystem

/// The objects a restore makes land where the archive says, whatever order its paths come
/// in: the target keeps the chain of open directories from the root to the last one used,
/// and must neither reuse a directory that only shares a prefix with the next path's parent
/// nor lose its way when the archive goes back up after a subdirectory.
@Suite struct RestoreTargetTests {
    @Test func pathsComeBackUpAndAcrossNamesSharingAPrefix() throws {
        let dir = try ContentTestDirectory()
        let target = RestoreTarget(root: dir.descriptor, backingPath: dir.path, keyring: ContentTestKeys().keyring)
        let attributes = BackupAttributes(try dir.descriptor.status())
        var fileAttributes = attributes
        fileAttributes.mode = UInt32(S_IFREG) | 0o640
        func file(_ path: String, _ contents: String) throws {
            // A file that ends with the mode it was made with, and one that does not.
            let made: UInt32 = path.hasPrefix("a/b") ? 0o640 : 0o604
            try target.beginFile(path, mode: made, [("user.test", Array(path.utf8))])
            try target.write(Array(contents.utf8), at: 0)
            try target.endFile(path, size: UInt64(contents.utf8.count), written: UInt64(contents.utf8.count), fileAttributes)
        }
        try target.makeDirectory("", attributes, [])
        for (path, isDirectory) in [("a", true), ("a/b", true), ("a/b/c", true), ("a/b/c/f", false), ("a/b/g", false),
                                    ("a/bb", true), ("a/bb/h", false), ("a/i", false), ("ab", true), ("ab/j", false),
                                    ("a/b/c/k", false), ("z", false)] {
            if isDirectory { try target.makeDirectory(path, attributes, []) } else { try file(path, "contents of " + path) }
        }
        try target.makeHardLink("ab/link", to: "a/b/c/f")
        try target.finish {}
        for path in ["a/b/c/f", "a/b/g", "a/bb/h", "a/i", "ab/j", "a/b/c/k", "z", "ab/link"] {
            let original = path == "ab/link" ? "a/b/c/f" : path
            let fd = try FileDescriptor.open(path: dir.path + "/" + path, [.readOnly])
            defer { fd.close() }
            #expect(try fd.readAll() == Array(("contents of " + original).utf8), "\(path)")
            #expect(try fd.extendedAttribute("user.test") == Array(original.utf8), "\(path)")
            #expect(try fd.status().st_mode & 0o7777 == 0o640, "\(path)")
        }
        for (path, names) in [("ab", ["j", "link"]), ("a", ["b", "bb", "i"])] {
            let directory = try FileDescriptor.open(path: dir.path + "/" + path, [.readOnly, .directory])
            defer { directory.close() }
            #expect(try directory.entryNames().sorted() == names, "\(path)")
        }
    }
}
