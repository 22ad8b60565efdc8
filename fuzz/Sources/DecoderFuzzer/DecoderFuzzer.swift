import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// One libFuzzer input: the first byte picks a decoder (or the cipher cross-check), the rest
/// is what it decodes. Every
/// decoder must return or throw; libFuzzer reports a crash, a hang (`-timeout`) or, under
/// AddressSanitizer, a bad memory access. Keys are random per run: inputs cannot carry a
/// valid MAC, so this explores what a decoder does before and around authentication (the
/// seeded tests in Tests/ProtfsCoreTests recompute MACs to go past it).
enum DecoderFuzzer {
    static let deviceKeys = DeviceKeys(deviceKey: .random())
    static let filesystemKeys = FilesystemKeys(filesystemKey: .random())
    static let keyring = FuzzKeys(vaultID: .random(), deviceKeys: deviceKeys,
                                  classBPublicKey: X25519.publicKey(for: X25519.generatePrivateKey()))
    static let objectID = ObjectID.random()
    static let symlinkLocation = SymlinkLocation(vaultID: keyring.vaultID, directoryID: objectID, name: Array("link".utf8))
    static let archiveID = SecureRandom.bytes(16)
    static let archiveKey = LockedKey.random()

    static func decode(_ bytes: UnsafeRawBufferPointer) {
        guard let selector = bytes.first else { return }
        let input = Array(bytes.dropFirst())
        let text = String(decoding: input, as: UTF8.self)
        switch selector % 12 {
        case 0: _ = FileHeader.diagnose(input, keyring: keyring)
        case 1: _ = try? Keybag.decode(input, deviceKeys: deviceKeys)
        case 2: _ = try? DirectoryMetadata.decode(input, vaultID: keyring.vaultID, keys: filesystemKeys)
        case 3:
            _ = BackingEntryName.classify(text)
            if let name = SIVNameCipher.entryNames(filesystemKeys).decrypt(text, tweak: objectID) {
                precondition((1...SIVNameCipher.maximumNameLength).contains(name.count))
            }
        case 4:
            if let decoded = Base64URL.decode(text) { precondition(Base64URL.encode(decoded) == text, "two encodings") }
        case 5:
            if let name = XattrCodec.name(ofBacking: text, objectID: objectID, keys: filesystemKeys) {
                precondition(name.starts(with: XattrCodec.userNamespace.utf8))
            }
            _ = try? XattrCodec.backingName(for: input, objectID: objectID, keys: filesystemKeys)
        case 6:
            _ = try? ClassHint.open(input, objectID: objectID, keys: filesystemKeys)
            _ = try? XattrCodec.openValue(input, name: Array("user.a".utf8), objectID: objectID, keys: filesystemKeys)
        case 7:
            _ = SymlinkTarget.plaintextLength(backingTarget: text, root: .currentWorkingDirectory)
            _ = SymlinkTarget.format(of: text)
            _ = try? SymlinkTarget.load(backingTarget: text, at: symlinkLocation, keys: filesystemKeys, root: .currentWorkingDirectory)
        case 8: CipherCrossCheck.run(input)
        case 9:
            // A keychain item record: its structure, then its attributes, which the MAC keeps a
            // fuzzer from reaching through the record, so they are decoded on their own too.
            _ = try? ItemRecord.open(input, recordName: text, vaultID: keyring.vaultID, keys: filesystemKeys)
            _ = ItemMetadata(parsing: input, version: 1)
            _ = ItemMetadata(parsing: input, version: ItemRecord.currentVersion)
            _ = ReservedFolderEntry.classify(text, in: ReservedNames.items, isRegularFile: true)
        case 10:
            // A backup archive: its header, an entry's attributes, and its keybag, each read at
            // the exact length a restore reads it (the keybag under a random key, which must
            // refuse it before anything in it is trusted).
            _ = try? BackupArchiveHeader.decode(input)
            if input.count >= BackupAttributes.byteCount {
                _ = try? BackupAttributes(decoding: Array(input.prefix(BackupAttributes.byteCount)))
            }
            if input.count >= BackupKeybag.byteCount {
                _ = try? BackupKeybag.decode(Array(input.prefix(BackupKeybag.byteCount)), archiveID: archiveID,
                                             contentAEAD: .xchacha20Poly1305, with: archiveKey)
            }
        default:
            var request = InputBytes(bytes: input)
            _ = try? ControlWire.readRequest(from: &request)
            var reply = InputBytes(bytes: input)
            _ = try? ControlWire.readReply(from: &reply)
        }
    }
}

/// The keys the header decoder is given: no class key installed, as when locked (the MACs
/// the fuzzer can reach are those of the device subkeys).
struct FuzzKeys: ClassKeySource {
    let vaultID: ObjectID
    let deviceKeys: DeviceKeys
    let classBPublicKey: [UInt8]

    func key(for protectionClass: ProtectionClass) -> LockedKey? { nil }
}

/// The input as a control-socket stream that ends where the input does.
struct InputBytes: ControlByteSource {
    let bytes: [UInt8]
    var position = 0

    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        guard bytes.count - position >= buffer.count else { throw position == bytes.count ? .closed : .truncated }
        bytes[position..<(position + buffer.count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
        position += buffer.count
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    DecoderFuzzer.decode(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM links an executable target's entry point as `<target>_main`, which replaces
/// libFuzzer's own `main`: hand control to libFuzzer's driver from there.
@_cdecl("DecoderFuzzer_main")
public func decoderFuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
