import ProtfsCrypto

/// Every key derived in protfs, each with its own `crypto_kdf` context (one purpose per key).
/// Changing a context changes the format: the known-answer tests pin them.
package enum KDFContexts {
    // Subkeys of the device key (the analog of the hardware UID).
    static let deviceKeyCheck = KDFContext("pfdevchk")
    static let keybagMAC = KDFContext("pfbagmac")
    static let deviceWrap = KDFContext("pfdevwrp")
    static let passcodeTangle = KDFContext("pftangle")
    static let headerMAC = KDFContext("pfhdrmac")
    static let headerClass = KDFContext("pfhdrcls")
    static let itemDevice = KDFContext("pfitmdev")
    static let deviceOrigin = KDFContext("pforigin")
    // Subkeys of the filesystem key (the analog of the volume key).
    static let nameMAC = KDFContext("pfnammac")
    static let nameEncryption = KDFContext("pfnamenc")
    static let directoryMetadata = KDFContext("pfdirmet")
    static let directoryClass = KDFContext("pfdircls")
    static let xattrValue = KDFContext("pfxatval")
    static let xattrNameMAC = KDFContext("pfxanmac")
    static let xattrNameEncryption = KDFContext("pfxanenc")
    static let symlinkTarget = KDFContext("pfsymlnk")
    static let classHint = KDFContext("pfclshnt")
    static let itemName = KDFContext("pfitmnam")
    static let itemMetadata = KDFContext("pfitmmet")
    // Subkeys of a backup passphrase's Argon2id output (docs/BACKUP.md).
    package static let backupStream = KDFContext("pfbkstrm")
    package static let backupKeybag = KDFContext("pfbkkbag")
}

/// The keys derived from the device key. Available in every lock state.
public final class DeviceKeys: Sendable {
    /// MAC key of the key-check value that tells a wrong device key from a wrong passcode.
    public let keyCheck: LockedKey
    /// MAC key over the whole keybag.
    public let keybagMAC: LockedKey
    /// Wraps the keybag entries that need no passcode (filesystem key, `none` class key).
    public let wrap: LockedKey
    /// Tangles the Argon2id output with the device (keyed BLAKE2b).
    public let passcodeTangle: LockedKey
    /// MAC key of per-file headers, so a file's class can be checked in every state.
    public let headerMAC: LockedKey
    /// Stream key that hides a header slot's class and wrap fields (format 2).
    public let headerClass: LockedKey
    /// Binds the keys of `...ThisDeviceOnly` keychain items to this device.
    public let itemDevice: LockedKey
    /// Seals the vault's first device key beside the keybag once the device key has moved.
    public let originWrap: LockedKey

    /// The keybag's keys from `deviceKey`; the keys of file headers and device-bound items
    /// from `originKey`, the vault's first device key (the same one unless it has moved).
    public init(deviceKey: LockedKey, originKey: LockedKey? = nil) {
        keyCheck = deviceKey.deriveSubkey(context: KDFContexts.deviceKeyCheck)
        keybagMAC = deviceKey.deriveSubkey(context: KDFContexts.keybagMAC)
        wrap = deviceKey.deriveSubkey(context: KDFContexts.deviceWrap)
        passcodeTangle = deviceKey.deriveSubkey(context: KDFContexts.passcodeTangle)
        originWrap = deviceKey.deriveSubkey(context: KDFContexts.deviceOrigin)
        let origin = originKey ?? deviceKey
        headerMAC = origin.deriveSubkey(context: KDFContexts.headerMAC)
        headerClass = origin.deriveSubkey(context: KDFContexts.headerClass)
        itemDevice = origin.deriveSubkey(context: KDFContexts.itemDevice)
    }
}

/// The keys derived from the filesystem key: everything that protects metadata.
public final class FilesystemKeys: Sendable {
    public let nameMAC: LockedKey
    public let nameEncryption: LockedKey
    public let directoryMetadata: LockedKey
    /// Stream key that hides a directory record's class (format 2).
    public let directoryClass: LockedKey
    public let xattrValue: LockedKey
    public let xattrNameMAC: LockedKey
    public let xattrNameEncryption: LockedKey
    public let symlinkTarget: LockedKey
    public let classHint: LockedKey
    /// Names keychain item records (keyed BLAKE2b of owner, service and account).
    public let itemName: LockedKey
    /// Seals keychain item attributes.
    public let itemMetadata: LockedKey

    public init(filesystemKey: LockedKey) {
        nameMAC = filesystemKey.deriveSubkey(context: KDFContexts.nameMAC)
        nameEncryption = filesystemKey.deriveSubkey(context: KDFContexts.nameEncryption)
        directoryMetadata = filesystemKey.deriveSubkey(context: KDFContexts.directoryMetadata)
        directoryClass = filesystemKey.deriveSubkey(context: KDFContexts.directoryClass)
        xattrValue = filesystemKey.deriveSubkey(context: KDFContexts.xattrValue)
        xattrNameMAC = filesystemKey.deriveSubkey(context: KDFContexts.xattrNameMAC)
        xattrNameEncryption = filesystemKey.deriveSubkey(context: KDFContexts.xattrNameEncryption)
        symlinkTarget = filesystemKey.deriveSubkey(context: KDFContexts.symlinkTarget)
        classHint = filesystemKey.deriveSubkey(context: KDFContexts.classHint)
        itemName = filesystemKey.deriveSubkey(context: KDFContexts.itemName)
        itemMetadata = filesystemKey.deriveSubkey(context: KDFContexts.itemMetadata)
    }
}

/// A 16-byte random identifier (vault id, file id, directory id).
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public static func random() -> ObjectID { ObjectID(bytes: SecureRandom.bytes(byteCount))! }

    public var description: String { bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
}

extension String {
    package func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
