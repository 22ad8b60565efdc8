import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// The 328-byte header at the start of every regular file's backing object
/// (docs/FORMAT.md, "Regular files"): the file id and two slots, each holding the per-file
/// key wrapped under one class and a MAC under the device-derived header key. The MAC needs
/// no class key, so a file's class can be checked in every lock state. A re-class writes the
/// other slot with a higher generation; a torn write leaves the old slot in force.
/// Format 2 hides each slot's generation and class under a device-derived stream key, puts a
/// new file's key in a random slot and fills the unused slot with random bytes, so a header
/// shows neither the class nor whether the file was ever re-classed; format 1 (the first
/// builds) stored both in the clear, and its files keep that format, a re-class included.
public struct FileHeader: Sendable {
    public static let byteCount = 328
    /// The version new files get.
    public static let formatVersion: UInt16 = 2
    static let readableVersions: ClosedRange<UInt16> = 1...formatVersion
    static let magic = Array("PFSF".utf8)
    static let prefixByteCount = 24
    static let slotByteCount = HeaderSlot.byteCount

    /// Why a header did not decode, for the log line; callers reply `EIO` for all of them.
    public enum Defect: Error, Sendable, Equatable, CustomStringConvertible {
        /// Shorter than a header.
        case truncated
        /// Wrong magic, version 0, or non-zero reserved bytes.
        case malformed
        /// Written by a newer protfs, which this build cannot read.
        case newerVersion(UInt16)
        /// Neither slot carries a valid MAC for this vault and file.
        case noValidSlot

        public var description: String {
            switch self {
            case .truncated: "file header is truncated"
            case .malformed: "file header is malformed"
            case .newerVersion(let v): "file header has format version \(v), made by a newer protfs"
            case .noValidSlot: "file header fails authentication"
            }
        }
    }

    public let fileID: ObjectID
    public let version: UInt16
    /// Both slots as stored (an invalid one is kept as is until overwritten).
    private var slotBytes: [[UInt8]]
    public private(set) var activeSlotIndex: Int
    private var activeSlot: HeaderSlot

    public var protectionClass: ProtectionClass { activeSlot.protectionClass }
    public var generation: UInt64 { activeSlot.generation }

    /// A header for a new file: a random file id and file key, wrapped for `protectionClass`
    /// at generation 1 in a random slot (format 2; slot 0 in format 1). For `completeUnlessOpen` only the class public key is
    /// needed, so this works while locked. `EACCES` when the needed key is not in `keyring`.
    /// (`version` 1 is for tests of what the first builds wrote.)
    public static func create(protectionClass: ProtectionClass, keyring: any ClassKeySource,
                              version: UInt16 = formatVersion) throws(Errno) -> (FileHeader, LockedKey) {
        // The file id, the slot's bit and the unused slot's bytes from one `getrandom` (they
        // are all stored in the clear); the key into locked memory by a call of its own.
        let random = SecureRandom.bytes(ObjectID.byteCount + 1 + HeaderSlot.byteCount)
        let fileID = ObjectID(bytes: Array(random[..<ObjectID.byteCount]))!
        let fileKey = LockedKey.random()
        let prefix = Self.prefix(fileID: fileID, version: version)
        let slot = HeaderSlot(generation: 1, protectionClass: protectionClass,
                              wrappedKey: try WrappedFileKey(wrapping: fileKey, for: protectionClass, fileID: fileID,
                                                             version: version, keyring: keyring))
        let index = version >= 2 ? Int(random[ObjectID.byteCount] & 1) : 0
        let unused = version >= 2 ? Array(random[(ObjectID.byteCount + 1)...]) : HeaderSlot.unused(version: version)
        let active = slot.encoded(prefix: prefix, version: version, keyring: keyring)
        let slotBytes = index == 0 ? [active, unused] : [unused, active]
        let header = FileHeader(fileID: fileID, version: version, slotBytes: slotBytes, activeSlotIndex: index, activeSlot: slot)
        return (header, fileKey)
    }

    /// Decodes and authenticates a header; `EIO` for every defect (see `diagnose`).
    public static func decode(_ bytes: [UInt8], keyring: any ClassKeySource) throws(Errno) -> FileHeader {
        do { return try parse(bytes, keyring: keyring) } catch { throw .io }
    }

    /// What is wrong with a header that `decode` refused, or nil if it decodes.
    public static func diagnose(_ bytes: [UInt8], keyring: any ClassKeySource) -> Defect? {
        do { _ = try parse(bytes, keyring: keyring); return nil } catch { return error }
    }

    /// The header bytes of a backing file (fewer when the file is shorter).
    public static func readBytes(from descriptor: FileDescriptor) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: byteCount)
        let count = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try descriptor.read(into: buffer, at: 0) }
        }.get()
        return Array(bytes[0..<count])
    }

    /// Reads and decodes the header of a backing file; a short file is `EIO`.
    public static func read(from descriptor: FileDescriptor, keyring: any ClassKeySource) throws(Errno) -> FileHeader {
        try decode(readBytes(from: descriptor), keyring: keyring)
    }

    /// Unwraps the per-file key: `EACCES` if the class key (for `completeUnlessOpen`, its
    /// private key) is not installed, `EIO` if authentication fails.
    public func unwrapFileKey(keyring: any ClassKeySource) throws(Errno) -> LockedKey {
        try activeSlot.wrappedKey.unwrap(for: protectionClass, fileID: fileID, version: version, keyring: keyring)
    }

    /// Re-classes the file: wraps `fileKey` for `newClass` into the other slot with the next
    /// generation, which becomes the active one, and overwrites the superseded slot (its wrap
    /// under the old class must not outlive the re-class). The header keeps its format
    /// version: the prefix both slots authenticate cannot change in place. Nothing is written: call
    /// `commitRewrap(to:)`. `EACCES` when the new class's key is not in `keyring`.
    public mutating func rewrap(to newClass: ProtectionClass, fileKey: LockedKey, keyring: any ClassKeySource) throws(Errno) {
        let slot = HeaderSlot(generation: generation + 1, protectionClass: newClass,
                              wrappedKey: try WrappedFileKey(wrapping: fileKey, for: newClass, fileID: fileID,
                                                             version: version, keyring: keyring))
        let newIndex = 1 - activeSlotIndex
        slotBytes[newIndex] = slot.encoded(prefix: Self.prefix(fileID: fileID, version: version), version: version, keyring: keyring)
        slotBytes[activeSlotIndex] = HeaderSlot.unused(version: version)
        activeSlotIndex = newIndex
        activeSlot = slot
    }

    /// Writes a re-class crash-atomically: the new active slot, a data sync (from here on a
    /// crash leaves the new class in force; before, the old one), then the overwritten old slot
    /// and another sync.
    public func commitRewrap(to descriptor: FileDescriptor) throws(Errno) {
        try writeSlot(activeSlotIndex, to: descriptor)
        try descriptor.syncData()
        try writeSlot(1 - activeSlotIndex, to: descriptor)
        try descriptor.syncData()
    }

    /// The same header under another keyring of the same vault (a backup's transport keys,
    /// or the device of a restored vault): the active slot re-hidden and re-MACed in the same
    /// place, the other slot unused. The wrapped file key does not change.
    public func moved(to keyring: any ClassKeySource) -> FileHeader {
        // The unused slot made anew (random bytes of one `getrandom`), the active one sealed
        // for `keyring`: a backup and a restore do this for every file.
        let active = activeSlot.encoded(prefix: Self.prefix(fileID: fileID, version: version), version: version, keyring: keyring)
        let unused = HeaderSlot.unused(version: version)
        let slots = activeSlotIndex == 0 ? [active, unused] : [unused, active]
        return FileHeader(fileID: fileID, version: version, slotBytes: slots, activeSlotIndex: activeSlotIndex,
                          activeSlot: activeSlot)
    }

    /// The 328 bytes as stored.
    public func encoded() -> [UInt8] {
        Self.prefix(fileID: fileID, version: version) + slotBytes[0] + slotBytes[1]
    }

    // MARK: private

    private init(fileID: ObjectID, version: UInt16, slotBytes: [[UInt8]], activeSlotIndex: Int, activeSlot: HeaderSlot) {
        self.fileID = fileID
        self.version = version
        self.slotBytes = slotBytes
        self.activeSlotIndex = activeSlotIndex
        self.activeSlot = activeSlot
    }

    private static func parse(_ bytes: [UInt8], keyring: any ClassKeySource) throws(Defect) -> FileHeader {
        guard bytes.count >= byteCount else { throw .truncated }
        guard Array(bytes[0..<4]) == magic else { throw .malformed }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        guard version <= formatVersion else { throw .newerVersion(version) }
        guard readableVersions.contains(version), bytes[6] == 0, bytes[7] == 0 else { throw .malformed }
        let prefix = Array(bytes[0..<prefixByteCount])
        let fileID = ObjectID(bytes: Array(bytes[8..<prefixByteCount]))!
        let stored = (0..<2).map { i in Array(bytes[prefixByteCount + i * slotByteCount ..< prefixByteCount + (i + 1) * slotByteCount]) }
        let valid = stored.map { HeaderSlot(decoding: $0, prefix: prefix, version: version, keyring: keyring) }
        // The highest generation wins; equal generations cannot come from protfs, slot 0 then.
        guard let index = valid.indices.filter({ valid[$0] != nil }).max(by: { valid[$0]!.generation < valid[$1]!.generation }) else {
            throw .noValidSlot
        }
        return FileHeader(fileID: fileID, version: version, slotBytes: stored, activeSlotIndex: index, activeSlot: valid[index]!)
    }

    private static func prefix(fileID: ObjectID, version: UInt16) -> [UInt8] {
        var prefix = magic
        withUnsafeBytes(of: version.littleEndian) { prefix.append(contentsOf: $0) }
        prefix += [0, 0]
        return prefix + fileID.bytes
    }

    private func writeSlot(_ index: Int, to descriptor: FileDescriptor) throws(Errno) {
        try slotBytes[index].withUnsafeBytes { slot in
            Result { () throws(Errno) in try descriptor.write(slot, at: Int64(Self.prefixByteCount + index * Self.slotByteCount)) }
        }.get()
    }
}

/// One slot of a file header: generation, class, the wrapped key, and the MAC that binds
/// them to the vault, the file id and the header prefix.
struct HeaderSlot: Sendable {
    static let byteCount = 152
    static let authenticatedByteCount = 120
    static let macByteCount = 32
    /// Format 2 hides the generation (a re-class would show), the class, the wrap kind, the
    /// reserved bytes and the ephemeral key (whose presence would tell `completeUnlessOpen`):
    /// XChaCha20 under the `pfhdrcls` key with the sealed key's own random nonce, MACed as
    /// stored.
    static let hiddenRange = 0..<48
    static let nonceRange = 48..<72

    let generation: UInt64
    let protectionClass: ProtectionClass
    let wrappedKey: WrappedFileKey

    /// A slot holding no key: zeros in format 1; random bytes in format 2, which look like a
    /// valid slot to anyone without the header MAC key, and never authenticate.
    static func unused(version: UInt16) -> [UInt8] {
        version >= 2 ? SecureRandom.bytes(byteCount) : [UInt8](repeating: 0, count: byteCount)
    }

    init(generation: UInt64, protectionClass: ProtectionClass, wrappedKey: WrappedFileKey) {
        self.generation = generation
        self.protectionClass = protectionClass
        self.wrappedKey = wrappedKey
    }

    /// The slot in `bytes` if it is valid: non-zero generation, a known class with its wrap
    /// kind, zero reserved bytes, and a MAC that checks. Nil otherwise.
    init?(decoding bytes: [UInt8], prefix: [UInt8], version: UInt16, keyring: any ClassKeySource) {
        var fields = Array(bytes[0..<Self.authenticatedByteCount])
        let mac = Array(bytes[Self.authenticatedByteCount...])
        guard ConstantTime.equal(mac, Self.mac(fields: fields, prefix: prefix, keyring: keyring)) else { return nil }
        Self.toggleHiddenFields(&fields, version: version, keyring: keyring)
        let generation = (0..<8).reduce(UInt64(0)) { $0 | UInt64(fields[$1]) << (8 * UInt64($1)) }
        guard generation != 0,
              let protectionClass = ProtectionClass(rawValue: fields[8]),
              let kind = FileKeyWrapKind(rawValue: fields[9]), kind == FileKeyWrapKind(for: protectionClass),
              fields[10..<16].allSatisfy({ $0 == 0 })
        else { return nil }
        let ephemeralPublicKey = Array(fields[16..<48])
        guard kind == .ephemeralX25519 || ephemeralPublicKey == WrappedFileKey.noEphemeralKey else { return nil }
        self.init(generation: generation, protectionClass: protectionClass,
                  wrappedKey: WrappedFileKey(kind: kind, ephemeralPublicKey: ephemeralPublicKey, sealedKey: Array(fields[48..<120])))
    }

    func encoded(prefix: [UInt8], version: UInt16, keyring: any ClassKeySource) -> [UInt8] {
        var fields: [UInt8] = []
        fields.reserveCapacity(Self.byteCount)
        withUnsafeBytes(of: generation.littleEndian) { fields.append(contentsOf: $0) }
        fields.append(protectionClass.rawValue)
        fields.append(wrappedKey.kind.rawValue)
        fields += [UInt8](repeating: 0, count: 6)
        fields += wrappedKey.ephemeralPublicKey
        fields += wrappedKey.sealedKey
        Self.toggleHiddenFields(&fields, version: version, keyring: keyring)
        return fields + Self.mac(fields: fields, prefix: prefix, keyring: keyring)
    }

    /// Hides or reveals (the stream is its own inverse) the fields of `hiddenRange` in format 2.
    private static func toggleHiddenFields(_ fields: inout [UInt8], version: UInt16, keyring: any ClassKeySource) {
        guard version >= 2 else { return }
        let stream = XChaCha20.xor(Array(fields[hiddenRange]), nonce: Array(fields[nonceRange]), key: keyring.deviceKeys.headerClass)
        fields.replaceSubrange(hiddenRange, with: stream)
    }

    /// `MAC(pfhdrmac, vault id || header[0..<24] || slot[0..<120])`.
    private static func mac(fields: [UInt8], prefix: [UInt8], keyring: any ClassKeySource) -> [UInt8] {
        BLAKE2b.mac(key: keyring.deviceKeys.headerMAC, outputByteCount: macByteCount, keyring.vaultID.bytes, prefix, fields)
    }
}
