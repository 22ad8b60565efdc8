import Foundation
import Testing

/// The app container (docs/DATAPROTECTION.md, "The app container"): a program run in
/// `protfsctl container` writes its documents, application support, caches and temporary
/// files where Foundation and every other API look them up, unchanged, and each new file
/// is in the container's class; a directory off every vault is refused.
@Suite("the app container")
struct AppContainerTests {
    @Test("unchanged code writes into the container, every file in its class, through every API")
    func unchangedCodeIsProtected() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        // Three ways a program names where its files go, none of which knows of protfs.
        let program = """
        import os, pathlib, tempfile
        open(os.path.expanduser("~/Documents/notes.txt"), "w").write("a note")
        pathlib.Path(os.environ["XDG_DATA_HOME"], "store.sqlite").write_bytes(b"rows")
        pathlib.Path(os.environ["XDG_CACHE_HOME"], "thumb.png").write_bytes(b"png")
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(b"scratch")
            print(f.name)
        """
        let run = vault.protfsctl(["container", vault.mountpoint, "com.example.notes", "--class", "complete", "--",
                                   "/usr/bin/python3", "-c", program])
        #expect(run.succeeded, "\(run.stderr)")
        let container = vault.path("Containers/com.example.notes")
        let temporary = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(temporary.hasPrefix(container + "/tmp/"), "\(temporary)")
        for file in [container + "/Documents/notes.txt", container + "/Library/Application Support/store.sqlite",
                     container + "/Library/Caches/thumb.png", temporary] {
            #expect(vault.protfsctl(["class", "get", file]).stdout == "complete\n", "\(file)")
        }
        // Locked, the container's files are refused like any complete file.
        try vault.lock(now: true)
        #expect(CommandRunner.run("cat", [container + "/Documents/notes.txt"]).stderr.contains("Permission denied"))

        let printed = vault.protfsctl(["container", vault.mountpoint, "com.example.notes"])
        #expect(printed.stdout.contains("export XDG_DATA_HOME='\(container)/Library/Application Support'"), "\(printed.stdout)")
        let outside = vault.protfsctl(["container", vault.root.path, "com.example.notes", "--", "/bin/true"])
        #expect(outside.status == 1 && outside.stderr.contains("is not on a protfs mount"), "\(outside.stderr)")
        #expect(!FileManager.default.fileExists(atPath: vault.root.path + "/Containers"))
    }
}
