import ProtfsFormat
import ProtfsSystem

/// `BACKING/protfs.passcode-seal.<generation>` (docs/FORMAT.md): the passcode secret the TPM
/// releases only for the right passcode, sealed for the keybag of that generation. A new one
/// is written before the keybag that needs it and the old one removed after, so a crash
/// between the two leaves the one the keybag on disk needs.
enum PasscodeSealFile {
    static func name(generation: UInt64) -> String { ReservedNames.passcodeSealPrefix + String(generation) }

    static func read(in root: FileDescriptor, generation: UInt64, backingPath: String) throws(VaultError) -> [UInt8] {
        let name = name(generation: generation)
        do {
            let file = try OwnedDescriptor.openRegularFile(name, in: root)
            var bytes = [UInt8](repeating: 0, count: DeviceKeyFile.maximumFileSize)
            let fd = file.borrowed
            let n = try bytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
            bytes.removeLast(bytes.count - n)
            return bytes
        } catch .noEntry {
            throw .passcodeSealFailed(reason: "\(backingPath)/\(name) is missing; restore it from a copy of the backing directory")
        } catch {
            throw .system(operation: "read the passcode seal in", path: backingPath, errno: error)
        }
    }

    static func write(_ sealed: [UInt8], in root: FileDescriptor, generation: UInt64, backingPath: String) throws(VaultError) {
        do { try root.writeFileAtomically(name(generation: generation), contents: sealed, syncDirectory: true) } catch {
            throw .system(operation: "write the passcode seal in", path: backingPath, errno: error)
        }
    }

    /// Removes the seals of other generations, with their recovery seals (a leftover is
    /// harmless: it opens nothing the current keybag holds).
    static func removeAll(in root: FileDescriptor, except generation: UInt64?) {
        guard let names = try? root.entryNames() else { return }
        let kept = generation.map { [self.name(generation: $0), RecoveryFile.passcodeName(generation: $0)] } ?? []
        for name in names where name.hasPrefix(ReservedNames.passcodeSealPrefix) && !kept.contains(name) {
            try? root.removeFile(name)
        }
    }
}
