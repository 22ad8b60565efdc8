import CSodium

public enum SecureRandom {
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        Sodium.ensure()
        guard let p = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(p, buffer.count)
    }

    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}

public enum ConstantTime {
    /// Equality that takes the same time wherever the inputs differ (MACs, SIVs).
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        Sodium.ensure()
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    /// True when every byte is zero (holes), in constant time for the length.
    public static func isZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        Sodium.ensure()
        guard let p = bytes.baseAddress, bytes.count > 0 else { return true }
        return sodium_is_zero(p.assumingMemoryBound(to: UInt8.self), bytes.count) == 1
    }
}
