import ProtfsSystem

extension FileDescriptor {
    /// Replaces the file `name` in this directory with `bytes` so that a crash leaves either
    /// the old or the new contents: write `temporaryName` (mode 0600), fsync it, rename it
    /// over `name`, fsync this directory.
    func replaceFile(_ name: String, with bytes: [UInt8], temporaryName: String) throws(Errno) {
        let fd = try FileDescriptor.open(temporaryName, in: self, [.writeOnly, .create, .truncate], mode: 0o600)
        do {
            defer { fd.close() }
            try fd.changeMode(0o600)
            try fd.writeAll(bytes)
            try fd.sync()
        } catch {
            try? removeFile(temporaryName)
            throw error
        }
        try rename(temporaryName, to: self, name)
        try sync()
    }
}
