/// A set of the SHA-256 bank's PCRs (0-23) a seal is bound to; empty: bound to none.
public struct PCRSelection: Sendable, Equatable, CustomStringConvertible {
    public static let count = 24
    /// Bit i: PCR i.
    public let mask: UInt32

    public init?(mask: UInt32) {
        guard mask >> Self.count == 0 else { return nil }
        self.mask = mask
    }

    public static let none = PCRSelection(mask: 0)!

    /// `7`, `0,7`, `0+7` (systemd-cryptenroll writes `+`), or empty for none.
    public init?(parsing text: String) {
        var mask: UInt32 = 0
        for part in text.split(whereSeparator: { $0 == "," || $0 == "+" }) {
            guard let index = Int(part), (0..<Self.count).contains(index) else { return nil }
            mask |= 1 << UInt32(index)
        }
        self.mask = mask
    }

    public var isEmpty: Bool { mask == 0 }
    public var indices: [Int] { (0..<Self.count).filter { mask & (1 << UInt32($0)) != 0 } }
    public var description: String { indices.map(String.init).joined(separator: ",") }
}
