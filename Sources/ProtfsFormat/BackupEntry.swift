import Glibc
import ProtfsSystem

/// One object of the backing directory in an archive (docs/BACKUP.md), after the keybag:
/// `kind (1) || path (2 + n)` then the kind's fields. File data follows a file entry as
/// extents, written and read by the caller.
package enum BackupEntryKind: UInt8 {
    case directory = 0x64  // d
    case file = 0x66       // f
    case symlink = 0x73    // s
    case node = 0x6E       // n
    case hardLink = 0x6C   // l
    case end = 0x65        // e
}

/// Mode, owner and times of a backing object (the kernel's `stat`, to the nanosecond).
package struct BackupAttributes: Equatable {
    package var mode: UInt32
    package var uid: UInt32
    package var gid: UInt32
    package var accessTime: timespec
    package var modificationTime: timespec

    package init(_ st: stat) {
        mode = st.st_mode
        uid = st.st_uid
        gid = st.st_gid
        accessTime = st.st_atim
        modificationTime = st.st_mtim
    }

    package static func == (a: BackupAttributes, b: BackupAttributes) -> Bool {
        a.encoded() == b.encoded()
    }

    package static let byteCount = 12 + 2 * 12

    package func encoded() -> [UInt8] {
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

    package init(decoding bytes: [UInt8]) throws(BackupError) {
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

/// What one object's extended attributes may hold in an archive: the kernel's bounds for one
/// value (`XATTR_SIZE_MAX`) and for the list of names (`XATTR_LIST_MAX`, a NUL after each),
/// and 16 MiB of values in all. Without the last, a crafted entry naming thousands of 64 KiB
/// values would make a restore hold them all before it makes the object.
package struct ExtendedAttributeBounds {
    package static let totalValueBytes = 16 << 20
    private var nameList = 0
    private var values = 0

    package init() {}

    /// Counts one more attribute; false when it goes past a bound.
    package mutating func admit(nameBytes: Int, valueBytes: Int) -> Bool {
        nameList += nameBytes + 1
        values += valueBytes
        return valueBytes <= ExtendedAttributeLimits.valueBytes && nameList <= ExtendedAttributeLimits.nameListBytes
            && values <= Self.totalValueBytes
    }
}
