import Foundation
import ProtfsDomain

/// iOS returns a program's matches in the order their items were added; the daemon orders
/// them by name (docs/CONTROL.md). `SecItemAdd` marks each item with when it was added, in
/// nanoseconds (a lookup attribute), and a search's matches are put back in that order. Items
/// without the mark (the Secret Service's, `protfsctl item`'s, earlier builds') are placed by
/// their creation second; ties keep the daemon's order.
enum InsertionOrder {
    static let attribute = "protfs:added"

    static func mark(_ item: inout ItemAttributes) {
        item.lookupAttributes[attribute] = String(DispatchTime.now().uptimeNanoseconds &+ wallClockOffset)
    }

    static func sorted<T>(_ found: [(item: ItemAttributes, secret: T)]) -> [(item: ItemAttributes, secret: T)] {
        found.enumerated().sorted { left, right in
            let (a, b) = (added(left.element.item), added(right.element.item))
            return a != b ? a < b : left.offset < right.offset
        }.map(\.element)
    }

    /// When the item was added, in nanoseconds since 1970.
    private static func added(_ item: ItemAttributes) -> UInt64 {
        item.lookupAttributes[attribute].flatMap { UInt64($0) } ?? UInt64(max(item.created, 0)) &* 1_000_000_000
    }

    /// The monotonic clock's distance from the wall clock, fixed once per process, so that
    /// marks of one process never go backwards and compare with other processes' marks.
    private static let wallClockOffset: UInt64 = {
        let wall = UInt64(max(Date().timeIntervalSince1970, 0) * 1_000_000_000)
        return wall &- DispatchTime.now().uptimeNanoseconds
    }()
}
