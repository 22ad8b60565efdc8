/// The keychain items a backup left out of its archive (docs/BACKUP.md): those bound to this
/// device, and, in a backup asked for by a user other than root, every other user's.
public struct BackupItemsLeftOut: Sendable, Equatable {
    /// `...ThisDeviceOnly` items: their keys never leave the device.
    public var deviceBound: Int
    /// Items of uids other than the one who asked: a vault's owner may back the vault up, not
    /// read other users' items through a restore of it (docs/THREAT-MODEL.md).
    public var otherUsers: Int

    public init(deviceBound: Int = 0, otherUsers: Int = 0) {
        self.deviceBound = deviceBound
        self.otherUsers = otherUsers
    }

    /// How `protfs backup` ends its report: "." or " (what was left out)."
    public var sentenceEnd: String {
        let parts = [deviceBound > 0 ? "\(deviceBound) ThisDeviceOnly items" : nil,
                     otherUsers == 1 ? "1 item of another user" : otherUsers > 1 ? "\(otherUsers) items of other users" : nil]
            .compactMap { $0 }
        return parts.isEmpty ? "." : " (\(parts.joined(separator: " and ")) left out)."
    }
}
