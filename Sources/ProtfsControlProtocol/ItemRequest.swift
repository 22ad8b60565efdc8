import ProtfsDomain

/// A keychain item request (docs/CONTROL.md). The daemon acts for the caller's uid
/// (`SO_PEERCRED`); `uid`, root only, names another owner. The secret of `add` and of an
/// `update` that changes it travels after the header, never in it.
public struct ItemRequest: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        case add(ItemAttributes)
        case get(service: String, account: String)
        case update(service: String, account: String, changes: ItemChanges, changesSecret: Bool)
        case delete(service: String, account: String)
        case list(service: String?)
        /// The items a query matches (the Secret Service's `SearchItems`, `SecItemCopyMatching`),
        /// with their secrets when the query asks for them.
        case search(ItemQuery)
        /// Every item a query matches changed at once (`SecItemUpdate`); a rename applies to a
        /// single match only.
        case updateMatches(ItemQuery, changes: ItemChanges, rename: ItemRename, changesSecret: Bool)
        /// Every item a query matches deleted at once (`SecItemDelete`).
        case deleteMatches(ItemQuery)
    }

    public let uid: UInt32?
    public let operation: Operation

    public init(uid: UInt32?, _ operation: Operation) {
        self.uid = uid
        self.operation = operation
    }

    /// The lengths the secrets after the header may have (an empty secret is a secret).
    var secretLengths: [ClosedRange<Int>] {
        switch operation {
        case .add, .update(_, _, _, changesSecret: true), .updateMatches(_, _, _, changesSecret: true):
            [0...ItemLimits.maximumSecretLength]
        case .get, .update, .delete, .list, .search, .updateMatches, .deleteMatches: []
        }
    }

    /// The wire name of the request.
    var kind: ControlRequestKind {
        switch operation {
        case .add: .itemAdd
        case .get: .itemGet
        case .update: .itemUpdate
        case .delete: .itemDelete
        case .list: .itemList
        case .search: .itemSearch
        case .updateMatches: .itemUpdateMatches
        case .deleteMatches: .itemDeleteMatches
        }
    }
}
