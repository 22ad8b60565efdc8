// The file half of the library, re-exported: `import DataProtection` is the one import an
// app writes.
@_exported import DataProtectionFiles

/// `FileManager()` with `import DataProtection`: a new protecting manager, as
/// `FileManager.default` is the shared one. The name `FileManager` is two types here (the
/// library's `ProtectedFileManager` and Foundation's), and Swift finds their two `init()`
/// equally good; a function of this module, which imports both, shadows them in a call, so
/// iOS code that makes its own manager compiles and protects unchanged.
public func FileManager() -> ProtectedFileManager { ProtectedFileManager() }
