/// The byte offsets that tell groups of stored objects apart: where every object of one group
/// holds one value and another group's objects all hold another. What an observer of the
/// backing directory could tell the groups (classes, re-classed or not) by; a byte that
/// varies within a group (random, a MAC) tells nothing. An object shorter than an offset
/// counts as holding no value there.
public func tellingOffsets(_ groups: [[[UInt8]]]) -> [Int] {
    let length = groups.joined().map(\.count).max() ?? 0
    let constants: [[Int: Int]] = groups.map { objects in
        Dictionary(uniqueKeysWithValues: (0..<length).compactMap { offset in
            let values = Set(objects.map { offset < $0.count ? Int($0[offset]) : -1 })
            return values.count == 1 ? (offset, values.first!) : nil
        })
    }
    return (0..<length).filter { offset in Set(constants.map { $0[offset] }).count > 1 }
}
