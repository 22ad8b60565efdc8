import Glibc
import ProtfsFormat
import ProtfsSystem

/// One object of the backing directory in an archive (docs/BACKUP.md), after the keybag:
/// `kind (1) || path (2 + n)` then the kind's fields. File data follows a file entry as
/// extents, written and read by the caller.
enum BackupEntryKind: UInt8 {
    case directory = 0x64  // d
    case file = 0x66       // f
    case symlink = 0x73    // s
    case node = 0x6E       // n
    case hardLink = 0x6C   // l
    case end = 0x65        // e
}

/// Mode, owner and times of a backing object (the kernel's `stat`, to the nanosecond).
struct BackupAttributes: Equatable {
    var mode: UInt32
    var uid: UInt32
    var gid: UInt32
    var accessTime: timespec
    var modificationTime: timespec

    init(_ st: stat) {
        mode = st.st_mode
        uid = st.st_uid
        gid = st.st_gid
        accessTime = st.st_atim
        modificationTime = st.st_mtim
    }

    static func == (a: BackupAttributes, b: BackupAttributes) -> Bool {
        a.encoded() == b.encoded()
    }

    static let byteCount = 12 + 2 * 12

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.appendLittleEndian(mode)
        out.appendLittleEndian(uid)
        out.appendLittleEndian(gid)
        for time in [accessTime, modificationTime] {
            out.appendLittleEndian(Int64(time.tv_sec))
            out.appendLittleEndian(UInt32(time.tv_nsec))
        }
        return out
    }

    init(decoding bytes: [UInt8]) throws(BackupError) {
        mode = bytes.littleEndian(at: 0)
        uid = bytes.littleEndian(at: 4)
        gid = bytes.littleEndian(at: 8)
        func time(_ offset: Int) throws(BackupError) -> timespec {
            let nanoseconds: UInt32 = bytes.littleEndian(at: offset + 8)
            guard nanoseconds < 1_000_000_000 else { throw .damaged("a time has more than a second of nanoseconds") }
            return timespec(tv_sec: Int(bytes.littleEndian(at: offset, as: Int64.self)), tv_nsec: Int(nanoseconds))
        }
        accessTime = try time(12)
        modificationTime = try time(24)
    }
}

/// Reading and writing the variable-length parts of entries.
extension BackupStreamWriter {
    func appendBytes(_ bytes: [UInt8], lengthBytes: Int) throws(BackupError) {
        var out: [UInt8] = []
        if lengthBytes == 2 { out.appendLittleEndian(UInt16(bytes.count)) } else { out.appendLittleEndian(UInt32(bytes.count)) }
        try append(out + bytes)
    }

    func appendEntry(_ kind: BackupEntryKind, path: String) throws(BackupError) {
        try append([kind.rawValue])
        try appendBytes(Array(path.utf8), lengthBytes: 2)
    }

    /// `count (2)`, then `name (2 + n) || value (4 + n)` each. `path` names the object when
    /// its attributes are past what a restore reads (`ExtendedAttributeBounds`).
    func appendExtendedAttributes(_ attributes: [(String, [UInt8])], of path: String) throws(BackupError) {
        var bounds = ExtendedAttributeBounds()
        for (name, value) in attributes where !bounds.admit(nameBytes: name.utf8.count, valueBytes: value.count) {
            throw .extendedAttributesTooLarge(path: path)
        }
        var count: [UInt8] = []
        count.appendLittleEndian(UInt16(attributes.count))
        try append(count)
        for (name, value) in attributes {
            try appendBytes(Array(name.utf8), lengthBytes: 2)
            try appendBytes(value, lengthBytes: 4)
        }
    }
}

extension BackupStreamReader {
    static let maximumValueLength = 1 << 20

    func readBytes(lengthBytes: Int) throws(BackupError) -> [UInt8] {
        let length = lengthBytes == 2 ? Int(try readInteger(UInt16.self)) : Int(try readInteger(UInt32.self))
        guard length <= Self.maximumValueLength else { throw .damaged("a value is longer than any protfs writes") }
        return try read(length)
    }

    /// A path relative to the backing root: components that are neither empty, `.` nor `..`
    /// (the root itself is the empty path).
    func readPath() throws(BackupError) -> String {
        let bytes = try readBytes(lengthBytes: 2)
        guard let path = String(validating: bytes, as: UTF8.self) else { throw .damaged("a path is not UTF-8") }
        guard bytes.isEmpty || Self.staysInside(bytes) else { throw .damaged("a path leaves the backing directory") }
        return path
    }

    /// No empty, `.` or `..` component and no NUL: checked on the bytes, once per entry of
    /// an archive of thousands (String splitting cost a restore a fifth of its time).
    static func staysInside(_ path: [UInt8]) -> Bool {
        var start = 0
        for end in 0 ... path.count where end == path.count || path[end] == UInt8(ascii: "/") {
            let component = path[start ..< end]
            if component.isEmpty || component.elementsEqual([UInt8(ascii: ".")])
                || component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) || component.contains(0) {
                return false
            }
            start = end + 1
        }
        return true
    }

    func readAttributes() throws(BackupError) -> BackupAttributes {
        try BackupAttributes(decoding: read(BackupAttributes.byteCount))
    }

    func readExtendedAttributes() throws(BackupError) -> [(String, [UInt8])] {
        let count = Int(try readInteger(UInt16.self))
        var out: [(String, [UInt8])] = []
        var bounds = ExtendedAttributeBounds()
        for _ in 0..<count {
            guard let name = String(validating: try readBytes(lengthBytes: 2), as: UTF8.self), name.hasPrefix("user.") else {
                throw .damaged("an extended attribute name is not a user.* name")
            }
            let length = Int(try readInteger(UInt32.self))
            guard bounds.admit(nameBytes: name.utf8.count, valueBytes: length) else {
                throw .damaged("an entry's extended attributes are larger than any file's can be")
            }
            out.append((name, try read(length)))
        }
        return out
    }
}

/// What one object's extended attributes may hold in an archive: the kernel's bounds for one
/// value (`XATTR_SIZE_MAX`) and for the list of names (`XATTR_LIST_MAX`, a NUL after each),
/// and 16 MiB of values in all. Without the last, a crafted entry naming thousands of 64 KiB
/// values would make a restore hold them all before it makes the object.
struct ExtendedAttributeBounds {
    static let totalValueBytes = 16 << 20
    private var nameList = 0
    private var values = 0

    /// Counts one more attribute; false when it goes past a bound.
    mutating func admit(nameBytes: Int, valueBytes: Int) -> Bool {
        nameList += nameBytes + 1
        values += valueBytes
        return valueBytes <= ExtendedAttributeLimits.valueBytes && nameList <= ExtendedAttributeLimits.nameListBytes
            && values <= Self.totalValueBytes
    }
}
