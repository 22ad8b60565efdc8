import Foundation
import ProtfsDomain
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Known answers for format version 1: a vault made once (Vectors/keybag-v1) with a fixed
/// device key and passcode. If any of these fail, the on-disk format changed: existing
/// vaults would no longer open.
@Suite struct KeybagVectorTests {
    struct Facts: Decodable {
        let passcode: String
        let vaultID: String
        let generation: UInt64
        let opsLimit: UInt64
        let memLimit: UInt64
        let rootClass: String
        let rootDirectoryID: String
        let deviceKeyCheck: String
        let classBPublicKey: String
        let salt: String
        let deviceSubkeys: [String: String]
        let filesystemSubkeys: [String: String]
        let passcodeKey: String
        let keys: [String: String]
        let rootClassHint: String
    }

    let vectors: URL
    let facts: Facts
    let dir = TemporaryDirectory()

    init() throws {
        vectors = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil)).appendingPathComponent("keybag-v1")
        facts = try JSONDecoder().decode(Facts.self, from: Data(contentsOf: vectors.appendingPathComponent("facts.json")))
        // Git does not keep the 0600 a device key needs: copy the vault out.
        #expect(mkdir(dir.child("backing"), 0o700) == 0)
        for (name, target, mode) in [("device.key", "device.key", 0o600), ("protfs.keybag", "backing/protfs.keybag", 0o600),
                                     ("protfs.dir", "backing/protfs.dir", 0o600)] as [(String, String, mode_t)] {
            try dir.write(Array(Data(contentsOf: vectors.appendingPathComponent(name))), to: target, mode: mode)
        }
    }

    func key(_ hexString: String) throws -> LockedKey {
        try hexBytes(hexString)!.withUnsafeBytes { try LockedKey.copying($0) }
    }

    @Test func deviceSubkeysArePinned() throws {
        let deviceKeys = DeviceKeys(deviceKey: try DeviceKeyFile(path: dir.child("device.key")).load())
        let derived = ["pfdevchk": deviceKeys.keyCheck, "pfbagmac": deviceKeys.keybagMAC, "pfdevwrp": deviceKeys.wrap,
                       "pftangle": deviceKeys.passcodeTangle, "pfhdrmac": deviceKeys.headerMAC]
        #expect(derived.mapValues { hex($0.testBytes) } == facts.deviceSubkeys)
    }

    @Test func keybagLayoutFollowsTheFormatPage() throws {
        let bag = try dir.read("backing/protfs.keybag")
        #expect(bag.count == 534)
        #expect(hex(Array(bag[12..<28])) == facts.vaultID)
        #expect(bag.littleEndian(at: 28, as: UInt64.self) == facts.generation)
        #expect(bag.littleEndian(at: 36, as: UInt64.self) == facts.opsLimit)
        #expect(bag.littleEndian(at: 44, as: UInt64.self) == facts.memLimit)
        #expect(hex(Array(bag[52..<68])) == facts.salt)
        #expect(hex(Array(bag[100..<132])) == facts.classBPublicKey)
        // The device key check and the MAC, recomputed from the page's definitions.
        let check = BLAKE2b.mac(key: try key(facts.deviceSubkeys["pfdevchk"]!), Array("protfs device key check v1".utf8),
                                hexBytes(facts.vaultID)!)
        #expect(hex(Array(bag[68..<100])) == facts.deviceKeyCheck && hex(check) == facts.deviceKeyCheck)
        #expect(BLAKE2b.mac(key: try key(facts.deviceSubkeys["pfbagmac"]!), Array(bag[0..<502])) == Array(bag[502...]))
        // Each entry opens with the page's associated data and the right wrapping key.
        let wrappingKeys = [try key(facts.deviceSubkeys["pfdevwrp"]!), try key(facts.deviceSubkeys["pfdevwrp"]!),
                            try key(facts.passcodeKey), try key(facts.passcodeKey), try key(facts.passcodeKey)]
        let names = ["filesystem", "none", "completeUntilFirstUserAuthentication", "complete", "completeUnlessOpenPrivate"]
        for i in 0..<5 {
            let start = 132 + i * 74
            var ad = Array("PROTFSKB".utf8) + [1, 0] + hexBytes(facts.vaultID)! + [bag[start], bag[start + 1]]
            ad += [UInt8(facts.generation), 0, 0, 0, 0, 0, 0, 0]
            let unwrapped = try XChaCha20Poly1305.unwrap(Array(bag[(start + 2)..<(start + 74)]), authenticating: ad,
                                                         with: wrappingKeys[i])
            #expect(hex(unwrapped.testBytes) == facts.keys[names[i]])
        }
        #expect(hex(X25519.publicKey(for: try key(facts.keys["completeUnlessOpenPrivate"]!))) == facts.classBPublicKey)
    }

    @Test func currentCodeOpensAndUnlocksTheVault() throws {
        let bag = try dir.read("backing/protfs.keybag")
        let vault = try Vault.open(backing: dir.child("backing"), deviceKeyPath: dir.child("device.key"))
        #expect("\(vault.vaultID)" == facts.vaultID)
        #expect(vault.generation == facts.generation)
        #expect(vault.contentAEAD == .xchacha20Poly1305, "a vault made before the choice opens as it was made")
        #expect(vault.rootMetadata.protectionClass == ProtectionClass(spelling: facts.rootClass))
        #expect("\(vault.rootMetadata.directoryID)" == facts.rootDirectoryID)
        let fk = vault.filesystemKeys
        let derived = ["pfnammac": fk.nameMAC, "pfnamenc": fk.nameEncryption, "pfdirmet": fk.directoryMetadata,
                       "pfxatval": fk.xattrValue, "pfxanmac": fk.xattrNameMAC, "pfxanenc": fk.xattrNameEncryption,
                       "pfsymlnk": fk.symlinkTarget, "pfclshnt": fk.classHint]
        #expect(derived.mapValues { hex($0.testBytes) } == facts.filesystemSubkeys)
        #expect(try ClassHint.open(hexBytes(facts.rootClassHint)!, objectID: vault.rootMetadata.directoryID, keys: fk)
                == vault.rootMetadata.protectionClass)
        // Encoding is byte-exact: decoding and re-encoding gives the same files.
        #expect(try Keybag.decode(bag, deviceKeys: vault.keyring.deviceKeys).encoded() == bag)
        #expect(vault.rootMetadata.encoded(vaultID: vault.vaultID, keys: fk) == (try dir.read("backing/protfs.dir")))

        let keybag = try Keybag.decode(bag, deviceKeys: vault.keyring.deviceKeys)
        let passcodeKey = try Keybag.derivePasscodeKey(passcode: passcode(facts.passcode), salt: keybag.salt, kdf: keybag.kdf,
                                                       vaultID: keybag.vaultID, deviceKeys: vault.keyring.deviceKeys)
        #expect(hex(passcodeKey.testBytes) == facts.passcodeKey)
        // Copied out without its wrong-passcode record, as a device key moved to another
        // machine: passcodes wait for the record that `protfs fsck --repair` makes.
        #expect(throws: VaultError.stateMissing(path: vault.statePath)) { try vault.unlock(passcode: passcode(facts.passcode)) }
        #expect(try vault.recreateMissingState() == vault.statePath)
        try vault.unlock(passcode: passcode(facts.passcode))
        let keyring = vault.keyring
        #expect(hex(try #require(keyring.key(for: .none)).testBytes) == facts.keys["none"])
        #expect(hex(try #require(keyring.key(for: .complete)).testBytes) == facts.keys["complete"])
        #expect(hex(try #require(keyring.key(for: .completeUntilFirstUserAuthentication)).testBytes)
                == facts.keys["completeUntilFirstUserAuthentication"])
        #expect(hex(try #require(keyring.key(for: .completeUnlessOpen)).testBytes) == facts.keys["completeUnlessOpenPrivate"])
        #expect(hex(keyring.classBPublicKey) == facts.classBPublicKey)
    }
}
