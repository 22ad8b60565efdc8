import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// `BACKING/protfs.device-origin.<tag>` (docs/FORMAT.md): once a vault's device key has moved
/// (`protfs device-key`), its first device key, which file headers and device-bound items
/// stay keyed with, sealed under the current one. Named after the current key, so a move
/// writes the new one beside the old, and a crash before the keybag changes leaves the one it
/// needs.
enum DeviceOriginFile {
    static let prefix = ReservedNames.namespacePrefix + "device-origin."

    static func name(for deviceKeys: DeviceKeys) -> String {
        let tag = BLAKE2b.mac(key: deviceKeys.originWrap, outputByteCount: 16, Array("protfs device origin name v1".utf8))
        return prefix + tag.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    private static func associatedData(_ vaultID: ObjectID) -> [UInt8] { Array("protfs device origin v1".utf8) + vaultID.bytes }

    static func write(_ origin: LockedKey, in root: FileDescriptor, vaultID: ObjectID, deviceKeys: DeviceKeys,
                      backingPath: String) throws(VaultError) {
        let sealed = XChaCha20Poly1305.wrap(origin, authenticating: associatedData(vaultID), with: deviceKeys.originWrap)
        do { try root.writeFileAtomically(name(for: deviceKeys), contents: sealed, syncDirectory: true) } catch {
            throw .system(operation: "write the device origin in", path: backingPath, errno: error)
        }
    }

    static func read(in root: FileDescriptor, vaultID: ObjectID, deviceKeys: DeviceKeys, backingPath: String) throws(VaultError) -> LockedKey {
        let name = name(for: deviceKeys)
        let sealed: [UInt8]
        do {
            let file = try OwnedDescriptor.openRegularFile(name, in: root)
            var bytes = [UInt8](repeating: 0, count: 128)
            let fd = file.borrowed
            let n = try bytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try fd.read(into: b, at: 0) } }.get()
            sealed = Array(bytes.prefix(n))
        } catch .noEntry {
            throw .keybagDamaged(reason: "its device key has moved and \(name), which the move wrote, is missing")
        } catch {
            throw .system(operation: "read the device origin in", path: backingPath, errno: error)
        }
        do { return try XChaCha20Poly1305.unwrap(sealed, authenticating: associatedData(vaultID), with: deviceKeys.originWrap) } catch {
            throw .keybagDamaged(reason: "\(name) does not open under the device key")
        }
    }

    /// Removes the origins sealed under other device keys.
    static func removeAll(in root: FileDescriptor, except deviceKeys: DeviceKeys) {
        guard let names = try? root.entryNames() else { return }
        let kept = name(for: deviceKeys)
        for name in names where name.hasPrefix(prefix) && name != kept { try? root.removeFile(name) }
    }
}
