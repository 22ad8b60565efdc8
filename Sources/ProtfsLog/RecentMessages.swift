/// The last `capacity` distinct messages, for "log it once": inserting a new one past the
/// capacity forgets the oldest.
struct RecentMessages: Sendable {
    let capacity: Int
    private var members: Set<String> = []
    /// Insertion order, as a ring: `oldest` is the next slot to reuse once full.
    private var order: [String] = []
    private var oldest = 0

    init(capacity: Int) {
        precondition(capacity > 0, "a memory of no messages")
        self.capacity = capacity
    }

    var count: Int { members.count }

    /// True when `message` was not remembered (it is now).
    mutating func insert(_ message: String) -> Bool {
        guard members.insert(message).inserted else { return false }
        if order.count < capacity {
            order.append(message)
        } else {
            members.remove(order[oldest])
            order[oldest] = message
            oldest = (oldest + 1) % capacity
        }
        return true
    }
}
