import Foundation
import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// Which protfs mount holds the process's keychain items.
public enum ProtfsKeychain {
    private static let chosen = Mutex<String?>(nil)

    /// The keychain vault's mount point for this process, chosen in code; when nil (the
    /// default), `SecItem*` use the mount point in the `PROTFS_KEYCHAIN` environment
    /// variable, else the first line of `~/.config/protfs/keychain`, else the caller's only
    /// vault (a mount whose owner is this uid), else return `errSecNotAvailable`. Setting it
    /// is safe from any thread, unlike `setenv`.
    public static var mountpoint: String? {
        get { chosen.withLock { $0 } }
        set { chosen.withLock { $0 = newValue } }
    }
}

/// The keychain vault's daemon, and the item requests `SecItem*` make of it for the calling
/// user (the daemon learns the uid from the socket).
struct KeychainVault {
    let connection: KeychainConnection

    /// The process's connection, kept across calls (`KeychainConnection`: the vault chosen
    /// once, one connection for every thread), made again when `ProtfsKeychain.mountpoint`
    /// names another vault.
    private static let kept = Mutex<(given: String?, connection: KeychainConnection)?>(nil)

    /// The vault chosen in code, else as every Swift client chooses (`KeychainChoice`:
    /// `PROTFS_KEYCHAIN`, `~/.config/protfs/keychain`, else the caller's only vault). Nothing
    /// is asked of the daemon until a request: `errSecNotAvailable` then when none names a
    /// live daemon (with why on standard error, once per reason: a status alone cannot say it).
    static func find() -> KeychainVault {
        let given = ProtfsKeychain.mountpoint
        return KeychainVault(connection: kept.withLock { kept in
            if let kept, kept.given == given { return kept.connection }
            let fresh = KeychainConnection(given: given, givenSource: "ProtfsKeychain.mountpoint")
            kept = (given, fresh)
            return fresh
        })
    }

    static func choice() -> KeychainChoice {
        KeychainChoice.current(given: ProtfsKeychain.mountpoint, givenSource: "ProtfsKeychain.mountpoint")
    }

    func add(_ item: ItemAttributes, secret: Data) throws(KeychainStatus) {
        let buffer = Self.lockedCopy(secret)
        defer { buffer.wipe() }
        _ = try send(.add(item), secrets: [buffer])
    }

    /// The caller's items `query` matches, and their secrets when it asks for them: one
    /// request, answered by the daemon from one state of the store. Each secret is copied once
    /// from locked memory into the object handed to the caller (whose it then is); the locked
    /// copy is wiped. `errSecItemNotFound` for none.
    func search(_ query: ItemQuery) throws(KeychainStatus) -> [(item: ItemAttributes, secret: NSData?)] {
        let message = try send(.search(query))
        let found: [(item: ItemAttributes, secret: NSData?)]
        switch (message.reply, message.secret) {
        case (.items(let items), nil) where !query.returnsSecrets:
            found = items.map { ($0, nil) }
        case (.itemsWithSecrets(let items, let lengths), let secrets?) where query.returnsSecrets:
            defer { secrets.wipe() }
            var offset = 0
            found = secrets.withUnsafeBytes { bytes in
                zip(items, lengths).map { item, length in
                    defer { offset += length }
                    return (item, length == 0 ? NSData() : NSData(bytes: bytes.baseAddress! + offset, length: length))
                }
            }
        default: throw .notAvailable
        }
        guard !found.isEmpty else { throw .itemNotFound }
        return found
    }

    /// Changes every item of the caller `query` matches, in one request.
    func update(_ query: ItemQuery, changes: ItemChanges, rename: ItemRename, secret: Data?) throws(KeychainStatus) {
        let buffer = secret.map(Self.lockedCopy)
        defer { buffer?.wipe() }
        _ = try send(.updateMatches(query, changes: changes, rename: rename, changesSecret: buffer != nil),
                     secrets: buffer.map { [$0] } ?? [])
    }

    /// Deletes every item of the caller `query` matches, in one request.
    func delete(_ query: ItemQuery) throws(KeychainStatus) {
        _ = try send(.deleteMatches(query))
    }

    /// How many requests this process sent each keychain daemon, by mount point: tests count
    /// the round trips of a call with it.
    private static let requestCounts = Mutex<[String: Int]>([:])

    static func requestCount(mountpoint: String) -> Int {
        requestCounts.withLock { $0[ControlSocketPath.canonicalMountpoint(mountpoint), default: 0] }
    }

    private func send(_ operation: ItemRequest.Operation, secrets: [SecureBuffer] = []) throws(KeychainStatus) -> ControlReplyMessage {
        let message: ControlReplyMessage
        do {
            message = try connection.exchange(.item(ItemRequest(uid: nil, operation)), secrets: secrets)
        } catch {
            switch error {
            case .noKeychain(let reason): DataProtectionDiagnostics.report(reason)
            case .unreachable(let mountpoint, let failure):
                DataProtectionDiagnostics.report("the keychain vault \(mountpoint) has no daemon answering: \(failure.message)")
            case .refused(let failure): throw KeychainStatus(failure)
            }
            throw .notAvailable
        }
        guard let mountpoint = connection.mountpoint else { return message }
        Self.requestCounts.withLock { $0[mountpoint, default: 0] += 1 }
        // Observers registered by the notifications' raw names name nothing of the library:
        // the keychain in use is the vault they follow.
        KeychainVaultMonitor.start(following: mountpoint)
        return message
    }

    private static func lockedCopy(_ data: Data) -> SecureBuffer {
        data.withUnsafeBytes { SecureBuffer(copying: $0) }
    }
}
