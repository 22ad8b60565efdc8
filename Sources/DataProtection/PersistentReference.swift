import Foundation

/// What `kSecReturnPersistentRef` returns and `kSecValuePersistentRef` takes: the item's
/// service and account (unique per user), so the reference finds that item again for as
/// long as it keeps its name. Opaque to the caller, as on iOS.
struct PersistentReference: Equatable {
    let service: String
    let account: String

    private static let kind = "protfs-genp-1"

    init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    /// Reads a reference; nil for bytes that are not one.
    init?(_ data: Data) {
        guard let fields = try? JSONDecoder().decode([String].self, from: data), fields.count == 3, fields[0] == Self.kind else {
            return nil
        }
        self.init(service: fields[1], account: fields[2])
    }

    var data: Data {
        // Encoding an array of strings cannot fail.
        (try? JSONEncoder().encode([Self.kind, service, account])) ?? Data()
    }
}
