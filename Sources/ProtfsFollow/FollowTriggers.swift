/// What `protfsctl follow` locks the vault on (`--on screen-lock,sleep`; both by default).
public struct FollowTriggers: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The session's screen lock: lock with the mount's grace.
    public static let screenLock = FollowTriggers(rawValue: 1)
    /// Sleep: lock at once, before the machine sleeps.
    public static let sleep = FollowTriggers(rawValue: 2)
    public static let all: FollowTriggers = [.screenLock, .sleep]

    static let names: [(String, FollowTriggers)] = [("screen-lock", .screenLock), ("sleep", .sleep)]

    /// A comma-separated list of `screen-lock` and `sleep`; nil when a word is neither (or
    /// the list is empty).
    public init?(list: String) {
        var triggers: FollowTriggers = []
        for word in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let named = Self.names.first(where: { $0.0 == word }) else { return nil }
            triggers.insert(named.1)
        }
        self = triggers
    }

    public var description: String { Self.names.filter { contains($0.1) }.map(\.0).joined(separator: ",") }
}
