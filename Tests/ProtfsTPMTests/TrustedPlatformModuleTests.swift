import ProtfsCrypto
import ProtfsTestSupport
@testable import ProtfsTPM
import Testing

/// Sealing and unsealing against a software TPM of the test's own: the secret comes back
/// whole, only from the TPM that sealed it, only while the bound PCRs hold, and a wrong auth
/// value is counted by the TPM until it locks out.
@Suite("TPM sealing (swtpm)", .serialized)
struct TrustedPlatformModuleTests {
    static func bytes(_ key: LockedKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    @Test("a sealed device key unseals to the same key, and its blob does not hold the key")
    func roundTrip() throws {
        let swtpm = try SoftwareTPM()
        let tpm = TrustedPlatformModule(tcti: swtpm.tcti)
        let key = LockedKey.random()
        let sealed = try tpm.sealDeviceKey(key, pcrs: .none)
        #expect(TrustedPlatformModule.isSealed(sealed))
        #expect(!sealed.containsSequence(Self.bytes(key)))
        #expect(Self.bytes(try tpm.unsealDeviceKey(sealed)) == Self.bytes(key))
        // Everything flushed: many rounds fit in a TPM without a resource manager.
        for _ in 0..<5 { _ = try tpm.unsealDeviceKey(sealed) }
    }

    @Test("another TPM cannot unseal: told as another TPM")
    func anotherTPM() throws {
        let first = try SoftwareTPM(), second = try SoftwareTPM()
        let sealed = try TrustedPlatformModule(tcti: first.tcti).sealDeviceKey(.random(), pcrs: .none)
        #expect(throws: TPMError.differentTPM) { try TrustedPlatformModule(tcti: second.tcti).unsealDeviceKey(sealed) }
    }

    @Test("a bound PCR extended: the unseal fails naming the PCR")
    func pcrBinding() throws {
        let swtpm = try SoftwareTPM()
        let tpm = TrustedPlatformModule(tcti: swtpm.tcti)
        let pcrs = PCRSelection(parsing: "7,16")!
        let sealed = try tpm.sealDeviceKey(.random(), pcrs: pcrs)
        _ = try tpm.unsealDeviceKey(sealed)
        let extended = try swtpm.tool("tpm2_pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)])
        #expect(extended == .exited(0))
        #expect(throws: TPMError.pcrMismatch(pcrs: pcrs)) { try tpm.unsealDeviceKey(sealed) }
    }

    @Test("wrong auth values are counted until lockout, which refuses the right one too")
    func dictionaryAttackLockout() throws {
        let swtpm = try SoftwareTPM()
        #expect(try swtpm.tool("tpm2_dictionarylockout", ["-s", "-n", "3", "-t", "60", "-l", "60"]) == .exited(0))
        let tpm = TrustedPlatformModule(tcti: swtpm.tcti)
        let secret = LockedKey.random(), auth = LockedKey.random()
        let sealed = try tpm.sealPasscodeSecret(secret, auth: auth)
        #expect(Self.bytes(try tpm.unsealPasscodeSecret(sealed, auth: auth)) == Self.bytes(secret))
        for _ in 0..<3 {
            #expect(throws: TPMError.authorizationFailed) { try tpm.unsealPasscodeSecret(sealed, auth: .random()) }
        }
        #expect(try tpm.lockout().isLockedOut)
        do {
            _ = try tpm.unsealPasscodeSecret(sealed, auth: auth)
            Issue.record("the right auth value opened a TPM in lockout")
        } catch .lockout(let state) {
            #expect(state?.retryAfterSeconds == 60)
        }
        #expect(try swtpm.tool("tpm2_dictionarylockout", ["-c"]) == .exited(0))
        #expect(Self.bytes(try tpm.unsealPasscodeSecret(sealed, auth: auth)) == Self.bytes(secret))
    }

    @Test("a sealed blob cut, extended, of another kind or changed is refused; the TPM, its handles flushed, still unseals")
    func hostileBlobs() throws {
        let swtpm = try SoftwareTPM()
        let tpm = TrustedPlatformModule(tcti: swtpm.tcti)
        let sealed = try tpm.sealDeviceKey(.random(), pcrs: .none)
        for length in 0..<sealed.count {
            #expect(throws: TPMError.self) { try SealedBlob(decoding: Array(sealed.prefix(length)), expecting: .deviceKey) }
        }
        #expect(throws: TPMError.self) { try SealedBlob(decoding: sealed + [0], expecting: .deviceKey) }
        #expect(throws: TPMError.self) { try SealedBlob(decoding: sealed, expecting: .passcodeSecret) }
        // A private part changed in one byte: the TPM's integrity check refuses it.
        var flipped = sealed
        flipped[sealed.count - 20] ^= 1
        #expect(throws: TPMError.self) { try tpm.unsealDeviceKey(flipped) }
        _ = try tpm.unsealDeviceKey(sealed)
    }

    @Test("PCR lists parse as systemd-cryptenroll writes them")
    func pcrLists() {
        #expect(PCRSelection(parsing: "0,7")?.mask == 0x81)
        #expect(PCRSelection(parsing: "0+7")?.description == "0,7")
        #expect(PCRSelection(parsing: "24") == nil)
        #expect(PCRSelection(parsing: "x") == nil)
    }
}

extension Array where Element: Equatable {
    func containsSequence(_ other: [Element]) -> Bool {
        guard !other.isEmpty, other.count <= count else { return false }
        return (0...(count - other.count)).contains { Array(self[$0..<($0 + other.count)]) == other }
    }
}
