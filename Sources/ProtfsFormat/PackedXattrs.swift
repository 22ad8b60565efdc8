import Glibc
import ProtfsCrypto
import ProtfsSystem

/// An object's small `user.*` extended attributes packed into one sealed backing xattr
/// (FORMAT.md "xattrs"), so that a backing filesystem holding one block of xattrs per inode
/// (ext4) holds several times as many as when each has its own backing name and seal.
/// Rewritten whole by one backing `setxattr`, which replaces it atomically: every change is
/// all or nothing. Larger values keep their own backing xattr (`XattrCodec`).
///
/// It holds plaintext names and values: the owner calls `wipe()` when done.
public struct PackedXattrs: Sendable {
    public static let backingName = "user.protfs.xa"
    static let formatVersion: UInt8 = 1
    /// Values up to this length are packed; a longer one keeps its own backing xattr, so one
    /// large value neither makes every later change rewrite it nor takes the whole blob's room.
    public static let maximumPackedValueLength = 1024
    /// The sealed blob must fit the kernel's 64 KiB xattr value limit.
    public static let maximumSealedLength = ExtendedAttributeLimits.valueBytes
    /// Follows the object id in the associated data. An attribute value's associated data is
    /// `object id || NAME`, and no NAME holds a NUL byte, so neither can open as the other.
    private static let associatedDataTag: [UInt8] = [0] + Array("protfs xattrs v1".utf8)

    /// NAME (without `user.`) and value, sorted by NAME, each NAME once.
    private var entries: [(name: [UInt8], value: [UInt8])] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// The mount's names (`user.NAME`), sorted.
    public var names: [[UInt8]] { entries.map { Array(XattrCodec.userNamespace.utf8) + $0.name } }

    /// The value of the mount's attribute `name` (`user.NAME`), if packed here.
    public func value(of name: [UInt8]) throws(Errno) -> [UInt8]? {
        var suffix = try XattrCodec.suffix(of: name)
        defer { secureZero(&suffix) }
        guard case .found(let index) = search(suffix) else { return nil }
        return entries[index].value
    }

    /// Adds or replaces `name` (`user.NAME`). `E2BIG` for a value too long to be packed.
    public mutating func set(_ name: [UInt8], _ value: [UInt8]) throws(Errno) {
        guard value.count <= Self.maximumPackedValueLength else { throw Errno(E2BIG) }
        var suffix = try XattrCodec.suffix(of: name)
        switch search(suffix) {
        case .found(let index):
            secureZero(&suffix)
            secureZero(&entries[index].value)
            entries[index].value = value
        case .insertAt(let index):
            entries.insert((suffix, value), at: index)
        }
    }

    /// Takes `name` (`user.NAME`) out; false if it was not packed here.
    @discardableResult
    public mutating func remove(_ name: [UInt8]) throws(Errno) -> Bool {
        var suffix = try XattrCodec.suffix(of: name)
        defer { secureZero(&suffix) }
        guard case .found(let index) = search(suffix) else { return false }
        var removed = entries.remove(at: index)
        secureZero(&removed.name)
        secureZero(&removed.value)
        return true
    }

    public mutating func wipe() {
        for index in entries.indices {
            secureZero(&entries[index].name)
            secureZero(&entries[index].value)
        }
        entries = []
    }

    // MARK: sealing

    /// `seal(plaintext, ad = object id || 0 || "protfs xattrs v1", key = pfxatval)`. `E2BIG`
    /// when it would not fit one backing xattr.
    public func sealed(objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> [UInt8] {
        var plaintext = encoded()
        defer { secureZero(&plaintext) }
        guard plaintext.count + XChaCha20Poly1305.overhead <= Self.maximumSealedLength else { throw Errno(E2BIG) }
        return XChaCha20Poly1305.seal(plaintext, authenticating: objectID.bytes + Self.associatedDataTag, with: keys.xattrValue)
    }

    /// The attributes in a blob made by `sealed`; `EIO` when it fails authentication
    /// (tampered, or moved from another object) or is not well formed.
    public static func open(_ sealed: [UInt8], objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> PackedXattrs {
        guard sealed.count <= maximumSealedLength,
              var plaintext = try? XChaCha20Poly1305.open(sealed, authenticating: objectID.bytes + associatedDataTag,
                                                          with: keys.xattrValue) else { throw .io }
        defer { secureZero(&plaintext) }
        return try decoded(plaintext)
    }

    // MARK: plaintext layout

    /// `version (1) || count (2) || count × (name length (1) || NAME || value length (2) || value)`,
    /// little-endian, NAMEs strictly ascending (bytewise).
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = [Self.formatVersion, UInt8(entries.count & 0xFF), UInt8(entries.count >> 8)]
        bytes.reserveCapacity(3 + entries.reduce(0) { $0 + 3 + $1.name.count + $1.value.count })
        for entry in entries {
            bytes.append(UInt8(entry.name.count))
            bytes += entry.name
            bytes += [UInt8(entry.value.count & 0xFF), UInt8(entry.value.count >> 8)]
            bytes += entry.value
        }
        return bytes
    }

    /// Hostile input: every length is checked against what is left before it is used, so a
    /// truncated blob or a huge count is `EIO` and memory never exceeds the input's size.
    static func decoded(_ bytes: [UInt8]) throws(Errno) -> PackedXattrs {
        var reader = ByteReader(bytes: bytes)
        guard try reader.byte() == formatVersion else { throw .io }
        let count = try reader.littleEndian16()
        var packed = PackedXattrs()
        do throws(Errno) {
            for _ in 0..<count {
                let name = try reader.bytes(Int(try reader.byte()))
                let value = try reader.bytes(Int(try reader.littleEndian16()))
                guard !name.isEmpty, name.count <= XattrCodec.maximumNameLength, !name.contains(0),
                      value.count <= maximumPackedValueLength,
                      packed.entries.last.map({ $0.name.lexicographicallyPrecedes(name) }) ?? true else {
                    var wiped = (name, value)
                    secureZero(&wiped.0)
                    secureZero(&wiped.1)
                    throw .io
                }
                packed.entries.append((name, value))
            }
            guard reader.isAtEnd else { throw .io }
        } catch {
            packed.wipe()
            throw error
        }
        return packed
    }

    private enum Place { case found(Int), insertAt(Int) }

    private func search(_ suffix: [UInt8]) -> Place {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].name == suffix { return .found(middle) }
            if entries[middle].name.lexicographicallyPrecedes(suffix) { low = middle + 1 } else { high = middle }
        }
        return .insertAt(low)
    }
}

/// Reads a plaintext front to back; `EIO` on reading past its end.
private struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(Errno) -> UInt8 { try bytes(1)[0] }

    mutating func littleEndian16() throws(Errno) -> Int {
        let pair = try bytes(2)
        return Int(pair[0]) | Int(pair[1]) << 8
    }

    mutating func bytes(_ count: Int) throws(Errno) -> [UInt8] {
        guard count <= bytes.count - offset else { throw .io }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}
