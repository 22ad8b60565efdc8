import ProtfsDomain

/// iOS returns `kSecAttrAccount` as the type it was given: a `String`, or `Data` (as
/// keychain wrappers such as SwiftKeychainWrapper pass it, and read it back). An item whose
/// account was given as `Data` says so in its lookup attributes (docs/SECRETS.md), beside the
/// `service` and `username` through which the Secret Service finds items made by `SecItemAdd`,
/// so that a map of its own does not hide it from those searches.
enum AccountType {
    static let attribute = "protfs:account"
    static let data = "data"

    static func isData(_ item: ItemAttributes) -> Bool {
        item.lookupAttributes[attribute] == data && InternetPassword(item) == nil
    }

    static func markData(_ item: inout ItemAttributes) {
        guard InternetPassword(item) == nil else { return }
        item.lookupAttributes[attribute] = data
    }

    /// A generic password has lookup attributes of its own (its access group, its account's
    /// type), so it carries the two the Secret Service would otherwise show for it.
    static func showToSecretService(_ item: inout ItemAttributes) {
        guard InternetPassword(item) == nil else { return }
        item.lookupAttributes["service"] = item.service
        item.lookupAttributes["username"] = item.account
    }
}
