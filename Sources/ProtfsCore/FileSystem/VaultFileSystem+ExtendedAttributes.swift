import Glibc
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Extended attributes on the mount: `user.protfs.class` is the class itself; other `user.*`
/// attributes are stored sealed under the filesystem key (available in every state).
extension VaultFileSystem {
    private static let classAttributeName = Array(ClassHint.attributeName.utf8)
    private static let capabilityAttributeName = Array("security.capability".utf8)

    // Attribute names are bytes, as the kernel sends them: they need not be UTF-8, and two
    // names that differ only in invalid UTF-8 are two attributes.

    /// What the kernel asks about names outside `user.*` is not supported (never ENOSYS,
    /// which would make the kernel stop asking for xattrs altogether).
    private func checkNamespace(_ name: [UInt8]) throws(Errno) {
        guard name.starts(with: XattrCodec.userNamespace.utf8) else { throw .notSupported }
    }

    public func extendedAttribute(_ name: [UInt8], of node: BackingNode) throws(Errno) -> [UInt8] {
        // Asked before every write: answered at once, without touching the backing object.
        if name == Self.capabilityAttributeName { throw .noData }
        try checkNamespace(name)
        guard let objectID = try objectID(of: node) else { throw .noData }
        if name == Self.classAttributeName {
            return Array(try protectionClass(of: node)!.name.utf8)
        }
        return try attributeStore(of: node, objectID: objectID).value(of: name)
    }

    /// The names `listxattr` shows, as bytes (they need not be UTF-8).
    public func extendedAttributeNames(of node: BackingNode) throws(Errno) -> [[UInt8]] {
        guard let objectID = try objectID(of: node) else { return [] }
        return [Self.classAttributeName] + (try attributeStore(of: node, objectID: objectID).names())
    }

    public func setExtendedAttribute(_ name: [UInt8], _ value: [UInt8], flags: Int32, of node: BackingNode,
                                     caller: Caller) throws(Errno) {
        try checkNamespace(name)
        guard let objectID = try objectID(of: node) else { throw .notPermitted }
        if name == Self.classAttributeName {
            guard let newClass = ProtectionClass(spelling: String(decoding: value, as: UTF8.self)) else { throw .invalid }
            try checkOwnerOrFowner(of: node, caller: caller)
            try reclass(node, to: newClass)
            return
        }
        try changingAttributes(of: node) { () throws(Errno) in
            try attributeStore(of: node, objectID: objectID).set(name, value, flags: flags)
        }
    }

    public func removeExtendedAttribute(_ name: [UInt8], of node: BackingNode) throws(Errno) {
        // `setcap -r` and friends: there is none to remove.
        if name == Self.capabilityAttributeName { throw .noData }
        try checkNamespace(name)
        guard let objectID = try objectID(of: node) else { throw .noData }
        if name == Self.classAttributeName { throw .notPermitted }
        try changingAttributes(of: node) { () throws(Errno) in
            try attributeStore(of: node, objectID: objectID).remove(name)
        }
    }

    private func attributeStore(of node: BackingNode, objectID: ObjectID) -> ExtendedAttributeStore {
        ExtendedAttributeStore(object: node.descriptor, objectID: objectID, keys: keys)
    }

    /// A backup copies the object before or after the change, and no other attribute change
    /// of the object interleaves with it.
    private func changingAttributes(of node: BackingNode, _ body: () throws(Errno) -> Void) throws(Errno) {
        try snapshots.changing(node.identity) { () throws(Errno) in
            try attributeUpdates.updating(node.identity, body)
        }
    }

    /// Only the owner, or root with CAP_FOWNER over the mount, may change a class (as for chmod).
    func checkOwnerOrFowner(of node: BackingNode, caller: Caller) throws(Errno) {
        let owner = try node.status().st_uid
        guard caller.uid != owner else { return }
        guard caller.hasFownerOverTheMount else { throw .notPermitted }
    }

    /// Re-classes a directory (its later children) or a file (re-wraps its key; contents
    /// untouched). A file needs the old class's key and the new class's wrapping key now.
    /// The class hint goes before the truth changes and comes back after (`ClassHint.remove`),
    /// so a crash in between cannot leave a hint that disagrees with the truth.
    /// A directory's re-class replaces its `protfs.dir`: a namespace change for a backup.
    public func reclass(_ node: BackingNode, to newClass: ProtectionClass) throws(Errno) {
        if node.isDirectory {
            try snapshots.changingNamespace { () throws(Errno) in try reclassDirectory(node, to: newClass) }
        } else {
            try snapshots.changing(node.identity) { () throws(Errno) in try reclassFile(node, to: newClass) }
        }
    }

    private func reclassDirectory(_ node: BackingNode, to newClass: ProtectionClass) throws(Errno) {
        let current = try directoryMetadata(of: node)
        guard current.protectionClass != newClass else { return }
        let metadata = current.withClass(newClass)
        try ClassHint.remove(from: node.descriptor)
        try metadata.replace(in: node.descriptor, vaultID: keyring.vaultID, keys: keys)
        node.cachedDirectoryMetadata = metadata
        try ClassHint.write(newClass, to: node.descriptor, objectID: metadata.directoryID, keys: keys)
    }

    private func reclassFile(_ node: BackingNode, to newClass: ProtectionClass) throws(Errno) {
        guard node.isRegularFile else { throw .notPermitted }
        try controller.withSharedHold { (held) throws(Errno) in
            var header = try header(of: node)
            let oldClass = header.protectionClass
            guard oldClass != newClass else { return }
            try held.checkReclass(from: oldClass, to: newClass)
            let fileKey = try header.unwrapFileKey(keyring: keyring)
            try header.rewrap(to: newClass, fileKey: fileKey, keyring: keyring)
            let file = try openForIO(node, .readWrite)
            try ClassHint.remove(from: node.descriptor)
            try header.commitRewrap(to: file.borrowed)
            node.cachedHeader = header
            node.content.state.withLock { $0.file?.adopt(rewrapped: header) }
            try ClassHint.write(newClass, to: node.descriptor, objectID: header.fileID, keys: keys)
        }
    }
}
