import ProtfsDomain
import ProtfsTestSupport
import Foundation
import Glibc
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Every decoder of bytes an attacker can plant in the backing directory, fed seeded
/// mutations of valid encodings (see `ByteMutator`). Each input must give a clear error or a
/// valid value, never a crash or a hang; a value it gives must re-encode to the input, so
/// no decoder accepts two encodings of one thing. The MACed formats are also fuzzed with
/// their MAC recomputed after the mutation (the test holds the keys), so the mutations
/// reach the parsing behind the MAC, which an attacker without the keys never could.
@Suite("Decoders under seeded mutation", .timeLimit(.minutes(2)))
struct DecoderFuzzTests {
    let keys = ContentTestKeys()
    let filesystemKeys = randomFilesystemKeys()
    var keyring: ClassKeyring { keys.keyring }

    // MARK: file headers

    @Test("FileHeader.decode and diagnose")
    func fileHeaders() throws {
        let (classA, _) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        var (reclassed, fileKey) = try FileHeader.create(protectionClass: .none, keyring: keyring)
        try reclassed.rewrap(to: .completeUnlessOpen, fileKey: fileKey, keyring: keyring)
        let (formatOne, _) = try FileHeader.create(protectionClass: .completeUnlessOpen, keyring: keyring, version: 1)
        let samples = [classA.encoded(), reclassed.encoded(), reclassed.encoded() + [UInt8](repeating: 0, count: 40),
                       formatOne.encoded()]
        let broken = fuzz("FileHeader", samples: samples, reseal: resealingHeaderSlots, checkHeader)
        #expect(broken.isEmpty, "\(broken)")
    }

    private func checkHeader(_ input: [UInt8]) -> String? {
        let defect = FileHeader.diagnose(input, keyring: keyring)
        let header: FileHeader
        do { header = try FileHeader.decode(input, keyring: keyring) } catch {
            guard error == .io else { return "decode threw \(error), not EIO" }
            guard let defect, !defect.description.isEmpty else { return "decode refused it, diagnose found nothing" }
            return nil
        }
        guard defect == nil else { return "decode took what diagnose calls \(defect!)" }
        guard header.encoded() == Array(input.prefix(FileHeader.byteCount)) else { return "does not re-encode to its input" }
        do { _ = try header.unwrapFileKey(keyring: keyring) } catch {
            guard error == .io else { return "unwrapping threw \(error) with every class key installed" }
        }
        return nil
    }

    /// Both slots' MACs recomputed as FORMAT.md defines them.
    private func resealingHeaderSlots(_ input: [UInt8]) -> [UInt8] {
        guard input.count >= FileHeader.byteCount else { return input }
        var output = input
        let prefix = Array(input[0..<FileHeader.prefixByteCount])
        for slot in 0..<2 {
            let start = FileHeader.prefixByteCount + slot * HeaderSlot.byteCount
            let fields = Array(input[start..<(start + HeaderSlot.authenticatedByteCount)])
            let mac = BLAKE2b.mac(key: keyring.deviceKeys.headerMAC, outputByteCount: HeaderSlot.macByteCount,
                                  keyring.vaultID.bytes, prefix, fields)
            output.replaceSubrange((start + HeaderSlot.authenticatedByteCount)..<(start + HeaderSlot.byteCount), with: mac)
        }
        return output
    }

    // MARK: keybag

    @Test("Keybag.decode and the device-key unwraps")
    func keybags() {
        let deviceKeys = KeybagFixture.deviceKeys
        let broken = fuzz("Keybag", samples: [KeybagFixture.bytes], reseal: { resealingKeybag($0, deviceKeys: deviceKeys) }) { input in
            let keybag: Keybag
            do throws(KeybagError) { keybag = try Keybag.decode(input, deviceKeys: deviceKeys) } catch {
                switch error {
                case .damaged(let reason): return reason.isEmpty ? "a damaged keybag without a reason" : nil
                case .newerVersion, .deviceKeyMismatch: return nil
                default: return "decode threw \(error)"
                }
            }
            guard keybag.encoded() == input else { return "does not re-encode to its input" }
            // The passcode entries need Argon2id and are not unwrapped here; the device ones
            // open or are damage.
            do throws(KeybagError) {
                _ = try keybag.unwrapFilesystemKey(deviceKeys: deviceKeys)
                _ = try keybag.unwrapNoneKey(deviceKeys: deviceKeys)
            } catch {
                guard case .damaged = error else { return "unwrapping threw \(error)" }
            }
            return nil
        }
        #expect(broken.isEmpty, "\(broken)")
    }

    /// The device-key check and the MAC recomputed for the mutated bytes.
    private func resealingKeybag(_ input: [UInt8], deviceKeys: DeviceKeys) -> [UInt8] {
        guard input.count == Keybag.byteCount else { return input }
        var output = input
        let vaultID = ObjectID(bytes: Array(input[12..<28]))!
        output.replaceSubrange(68..<100, with: Keybag.deviceKeyCheck(vaultID: vaultID, deviceKeys: deviceKeys))
        output.replaceSubrange(Keybag.macOffset..., with: BLAKE2b.mac(key: deviceKeys.keybagMAC, outputByteCount: Keybag.macByteCount,
                                                                     Array(output[0..<Keybag.macOffset])))
        return output
    }

    // MARK: directory metadata

    @Test("DirectoryMetadata.decode")
    func directoryMetadata() {
        let vaultID = keyring.vaultID
        // Both formats: 2 as written now, 1 as the first builds wrote it.
        let samples = ProtectionClass.allCases.flatMap { protectionClass in
            [DirectoryMetadata.new(protectionClass: protectionClass),
             DirectoryMetadata(directoryID: .random(), protectionClass: protectionClass, classNonce: nil)]
                .map { $0.encoded(vaultID: vaultID, keys: filesystemKeys) }
        }
        let reseal = { (mutated: [UInt8]) -> [UInt8] in
            guard let layout = DirectoryMetadata.Layout.all.first(where: { $0.byteCount == mutated.count }) else { return mutated }
            let body = Array(mutated[0..<layout.macOffset])
            return body + BLAKE2b.mac(key: filesystemKeys.directoryMetadata,
                                      outputByteCount: DirectoryMetadata.macByteCount, vaultID.bytes, body)
        }
        let broken = fuzz("DirectoryMetadata", samples: samples, reseal: reseal) { input in
            do throws(Errno) {
                let metadata = try DirectoryMetadata.decode(input, vaultID: vaultID, keys: filesystemKeys)
                return metadata.encoded(vaultID: vaultID, keys: filesystemKeys) == input ? nil : "does not re-encode to its input"
            } catch {
                return error == .io ? nil : "decode threw \(error), not EIO"
            }
        }
        #expect(broken.isEmpty, "\(broken)")
    }

    // MARK: names

    @Test("Base64URL.decode")
    func base64() {
        var generator = SeededGenerator(seed: FuzzBudget.seed)
        let samples = (0..<24).map { length in Array(Base64URL.encode(randomBytes(length, using: &generator)).utf8) }
        let broken = fuzz("Base64URL", samples: samples) { input in
            let text = String(decoding: input, as: UTF8.self)
            guard let decoded = Base64URL.decode(text) else { return nil }
            return Base64URL.encode(decoded) == text ? nil : "decoded a non-canonical encoding"
        }
        #expect(broken.isEmpty, "\(broken)")
    }

    @Test("SIVNameCipher.decrypt and BackingEntryName.classify")
    func entryNames() {
        let cipher = SIVNameCipher.entryNames(filesystemKeys)
        let tweak = ObjectID.random()
        let samples = [1, 2, 15, 16, 17, 100, 180, 255].map { Array(cipher.encrypt(sampleName(length: $0), tweak: tweak).utf8) }
        let broken = fuzz("SIVNameCipher", samples: samples) { input in
            let stored = String(decoding: input, as: UTF8.self)
            let kind = BackingEntryName.classify(stored)
            if kind == .encoded, Base64URL.decode(stored) == nil { return "classified as encoded but is not base64url" }
            guard let name = cipher.decrypt(stored, tweak: tweak) else { return nil }
            guard (1...SIVNameCipher.maximumNameLength).contains(name.count) else { return "decrypted to \(name.count) bytes" }
            return cipher.encrypt(name, tweak: tweak) == stored ? nil : "a second stored form of one name"
        }
        #expect(broken.isEmpty, "\(broken)")
    }

    @Test("BackingEntryName.plaintextName: planted names and sidecars")
    func plantedNamesAndSidecars() throws {
        try withScratchDirectory { directory in
            let directoryID = ObjectID.random()
            let longName = sampleName(length: 250)
            guard case .long(let entry, let sidecar, let encoded) = try BackingEntryName.make(for: longName, in: directoryID,
                                                                                            keys: filesystemKeys) else {
                Issue.record("a 250-byte name is stored long")
                return
            }
            try directory.makeEmptyFile(entry)
            let shortEntries = [1, 40, 120].map { try! BackingEntryName.make(for: sampleName(length: $0), in: directoryID, keys: filesystemKeys).entry }
            for short in shortEntries { try directory.makeEmptyFile(short) }
            let names = fuzz("backing entry names", samples: (shortEntries + [entry, sidecar]).map { Array($0.utf8) }) { input in
                let stored = String(decoding: input, as: UTF8.self)
                guard !stored.isEmpty, !stored.contains("/"),
                      let name = BackingEntryName.plaintextName(of: stored, in: directory, directoryID: directoryID, keys: filesystemKeys)
                else { return nil }
                let expected = try? BackingEntryName.make(for: name, in: directoryID, keys: filesystemKeys)
                return expected?.entry == stored ? nil : "a planted entry read back as \(name.count) bytes"
            }
            let sidecars = fuzz("sidecar contents", samples: [Array(encoded.utf8)]) { contents in
                do { try directory.writeFileAtomically(sidecar, contents: contents) } catch { return "cannot plant: \(error)" }
                guard let name = BackingEntryName.plaintextName(of: entry, in: directory, directoryID: directoryID, keys: filesystemKeys)
                else { return nil }
                return name == longName ? nil : "a planted sidecar renamed the entry"
            }
            #expect(names.isEmpty, "\(names)")
            #expect(sidecars.isEmpty, "\(sidecars)")
        }
    }

    // MARK: xattrs, symlinks, class hints

    @Test("XattrCodec: backing names, mount names and values")
    func extendedAttributes() throws {
        let objectID = ObjectID.random()
        let mountNames = ["user.a", "user.comment", "user." + String(repeating: "n", count: 159)].map { Array($0.utf8) }
        let backingNames = try mountNames.map { try XattrCodec.backingName(for: $0, objectID: objectID, keys: filesystemKeys) }
        let values = try mountNames.map { try XattrCodec.sealValue(Array("value of \($0.count)".utf8), name: $0, objectID: objectID, keys: filesystemKeys) }

        let names = fuzz("xattr names", samples: mountNames + [Array("trusted.x".utf8), Array("security.capability".utf8)]) { name in
            let stored: String
            do throws(Errno) { stored = try XattrCodec.backingName(for: name, objectID: objectID, keys: filesystemKeys) } catch {
                return [Errno.notSupported, .invalid, .range].contains(error) ? nil : "encoding a name threw \(error)"
            }
            return XattrCodec.name(ofBacking: stored, objectID: objectID, keys: filesystemKeys) == name ? nil : "the name does not come back"
        }
        let stored = fuzz("backing xattr names", samples: backingNames.map { Array($0.utf8) }) { input in
            let backing = String(decoding: input, as: UTF8.self)
            guard let name = XattrCodec.name(ofBacking: backing, objectID: objectID, keys: filesystemKeys) else { return nil }
            return (try? XattrCodec.backingName(for: name, objectID: objectID, keys: filesystemKeys)) == backing
                ? nil : "a second backing name for one attribute"
        }
        let sealed = fuzz("xattr values", samples: values) { input in
            for name in mountNames {
                do throws(Errno) { _ = try XattrCodec.openValue(input, name: name, objectID: objectID, keys: filesystemKeys) } catch {
                    guard error == .io else { return "opening threw \(error), not EIO" }
                    continue
                }
                guard values.contains(input) else { return "a mutated value opened" }
            }
            return nil
        }
        #expect(names.isEmpty && stored.isEmpty && sealed.isEmpty, "\(names + stored + sealed)")
    }

    /// The plaintext behind the blob's seal: what someone holding the key could plant.
    @Test("PackedXattrs: the blob's plaintext and its seal")
    func packedAttributes() throws {
        let objectID = ObjectID.random()
        var samples: [[UInt8]] = [PackedXattrs().encoded()]
        var packed = PackedXattrs()
        for (index, name) in ["a", "comment", "zoë", String(repeating: "n", count: 159)].enumerated() {
            try packed.set(Array("user.\(name)".utf8), [UInt8](repeating: UInt8(index), count: index * 300))
            samples.append(packed.encoded())
        }
        let plaintexts = fuzz("packed xattr plaintexts", samples: samples) { input in
            do throws(Errno) {
                return try PackedXattrs.decoded(input).encoded() == input ? nil : "a second encoding of one set of attributes"
            } catch {
                return error == .io ? nil : "decoding threw \(error), not EIO"
            }
        }
        let blob = try packed.sealed(objectID: objectID, keys: filesystemKeys)
        let seals = fuzz("packed xattr blobs", samples: [blob]) { input in
            do throws(Errno) {
                _ = try PackedXattrs.open(input, objectID: objectID, keys: filesystemKeys)
                return input == blob ? nil : "a mutated blob opened"
            } catch {
                return error == .io ? nil : "opening threw \(error), not EIO"
            }
        }
        #expect(plaintexts.isEmpty && seals.isEmpty, "\(plaintexts + seals)")
    }

    @Test("SymlinkTarget.load and plaintextLength, inline and out of line, formats 1, 2 and 3")
    func symlinkTargets() throws {
        try withScratchDirectory { root in
            let location = SymlinkLocation(vaultID: .random(), directoryID: .random(), name: Array("link".utf8))
            let targets = [1, 100, 2900].map { sampleName(length: $0) }
            let inline = try targets.map { try FormatTwoSymlinkTarget.store(target: $0, at: location, keys: filesystemKeys, root: root) }
            let formatOneInline = try targets.map { try FormatOneSymlinkTarget.store(target: $0, keys: filesystemKeys, root: root) }
            let longTarget = sampleName(length: SymlinkTarget.maximumTargetLength, seed: 3)
            let outOfLine = try FormatTwoSymlinkTarget.store(target: longTarget, at: location, keys: filesystemKeys, root: root)
            let movable = try SymlinkTarget.store(target: longTarget, at: location, keys: filesystemKeys, root: root)
            let formatOneOutOfLine = try FormatOneSymlinkTarget.store(target: longTarget, keys: filesystemKeys, root: root)
            let links = try FileDescriptor.open(ReservedNames.links, in: root, [.readOnly, .directory])
            defer { links.close() }

            let samples = inline + formatOneInline + [outOfLine, formatOneOutOfLine, movable]
            let backingTargets = fuzz("symlink backing targets", samples: samples.map { Array($0.utf8) }) { input in
                let backing = String(decoding: input, as: UTF8.self)
                let length = SymlinkTarget.plaintextLength(backingTarget: backing, root: root)
                let target: [UInt8]
                do throws(Errno) { target = try SymlinkTarget.load(backingTarget: backing, at: location, keys: filesystemKeys, root: root) } catch {
                    return error == .io ? nil : "load threw \(error), not EIO"
                }
                guard targets.contains(target) || target == longTarget else { return "a mutated target opened" }
                return length == target.count ? nil : "getattr would show \(String(describing: length)) for a \(target.count)-byte target"
            }
            var blobs: [String] = []
            for (format, backing) in [("3", movable), ("2", outOfLine), ("1", formatOneOutOfLine)] {
                let linkID = try #require(SymlinkTarget.linkID(of: backing))
                let blob = try links.readAllOf(linkID.description)
                blobs += fuzz("symlink blobs, format \(format)", samples: [blob]) { contents in
                    do { try links.writeFileAtomically(linkID.description, contents: contents) } catch { return "cannot plant: \(error)" }
                    do throws(Errno) {
                        return try SymlinkTarget.load(backingTarget: backing, at: location, keys: filesystemKeys, root: root) == longTarget
                            ? nil : "a planted blob changed the target"
                    } catch {
                        return error == .io ? nil : "load threw \(error), not EIO"
                    }
                }
            }
            #expect(backingTargets.isEmpty && blobs.isEmpty, "\(backingTargets + blobs)")
        }
    }

    @Test("ClassHint.open")
    func classHints() {
        let objectID = ObjectID.random()
        let samples = ProtectionClass.allCases.map { ClassHint.seal($0, objectID: objectID, keys: filesystemKeys) }
        let broken = fuzz("ClassHint", samples: samples) { input in
            do throws(Errno) {
                let opened = try ClassHint.open(input, objectID: objectID, keys: filesystemKeys)
                return samples.firstIndex(of: input).map { ProtectionClass.allCases[$0] } == opened ? nil : "a mutated hint opened"
            } catch {
                return error == .io ? nil : "open threw \(error), not EIO"
            }
        }
        #expect(broken.isEmpty, "\(broken)")
    }
}

extension FileDescriptor {
    /// The whole contents of the regular file `name` in this directory.
    fileprivate func readAllOf(_ name: String) throws -> [UInt8] {
        let file = try OwnedDescriptor.openRegularFile(name, in: self).release()
        defer { file.close() }
        return try file.readAll()
    }
}
