/// The fixed layouts of docs/FORMAT.md are little-endian; these read and write their
/// integer fields.
extension Array where Element == UInt8 {
    package mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// The integer stored at `offset`; the caller has checked the length.
    package func littleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        var value = T.zero
        Swift.withUnsafeMutableBytes(of: &value) { dst in
            for i in 0..<MemoryLayout<T>.size { dst[i] = self[offset + i] }
        }
        return T(littleEndian: value)
    }
}
