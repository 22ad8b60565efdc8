import ProtfsDomain
import Synchronization

/// What the census counts: an object holding a per-file key, by its class as it is now, with
/// the key schedules its cipher made from the key.
protocol FileKeyHolder: AnyObject, Sendable {
    var protectionClass: ProtectionClass { get }
    var keyScheduleCount: Int { get }
}

/// The per-file keys in memory: each lives in an open file's content object (the filesystem's
/// `EncryptedFile`), which enrols here for its lifetime, with the key schedules its cipher made
/// from the key (OpenSSL's contexts, freed with the object). It is how the lock's wipe is
/// checked: once `locked`, neither may be left of a `complete` file, whatever requests raced
/// the lock. It counts by object and class, so the keys know nothing of the filesystem.
public final class FileKeyCensus: Sendable {
    private struct Entry {
        weak var file: (any FileKeyHolder)?
    }
    private let live = Mutex<[ObjectIdentifier: Entry]>([:])

    public init() {}

    func enrol(_ file: any FileKeyHolder) {
        live.withLock { $0[ObjectIdentifier(file)] = Entry(file: file) }
    }

    func leave(_ file: any FileKeyHolder) {
        _ = live.withLock { $0.removeValue(forKey: ObjectIdentifier(file)) }
    }

    /// How many content objects of `protectionClass` (by their header) hold a key now.
    public func count(of protectionClass: ProtectionClass) -> Int {
        live.withLock { $0.values.count { $0.file?.protectionClass == protectionClass } }
    }

    /// How many key schedules the content objects of `protectionClass` hold now.
    public func keySchedules(of protectionClass: ProtectionClass) -> Int {
        live.withLock { entries in
            entries.values.reduce(0) { sum, entry in
                guard let file = entry.file, file.protectionClass == protectionClass else { return sum }
                return sum + file.keyScheduleCount
            }
        }
    }
}
