import ProtfsFormat

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
