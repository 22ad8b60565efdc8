import ProtfsCommandLine
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import ProtfsTPM

/// `protfs init BACKING [--class CLASS] [--device-key PATH] [--tpm2 [--tpm2-pcrs=LIST] [--recovery-key]] [--passcode-file FILE |
/// --passcode-command CMD | --no-passcode] [--kdf interactive|moderate] [--cipher aes-256-gcm|xchacha20-poly1305]`:
/// creates a vault, without a passcode when asked (docs/BACKUP.md), its device key sealed by the TPM when asked
/// (docs/OPERATIONS.md), its contents sealed with the cipher asked for or the one this CPU runs fastest
/// (docs/FORMAT.md, "Contents").
enum InitCommand {
    static let command = Command(
        name: "init",
        synopsis: "BACKING [--class CLASS] [--device-key PATH] [--tpm2 [--tpm2-pcrs LIST] [--recovery-key]] "
            + "[--passcode-file FILE | --passcode-command CMD | --no-passcode] [--kdf interactive|moderate] "
            + "[--cipher aes-256-gcm|xchacha20-poly1305]",
        valueOptions: PasscodeReader.options.union(["--class", "--device-key", "--kdf", "--tpm2-pcrs", "--cipher"]),
        flags: ["--no-passcode", "--tpm2", "--recovery-key"],
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let backing = try arguments.operands("BACKING")[0]
        let protectionClass = try arguments.value("--class").map(parseClass) ?? .defaultForNewVaults
        let kdf = try parseKDF(arguments.value("--kdf") ?? "moderate")
        let cipher = try arguments.value("--cipher").map(parseCipher) ?? .preferredOnThisCPU
        let noPasscode = arguments.isSet("--no-passcode")
        let reader = try PasscodeReader(options: arguments, vault: backing)
        let sealing = arguments.isSet("--tpm2")
        let pcrs = try parsePCRs(arguments.value("--tpm2-pcrs"), sealing: sealing)
        guard sealing || !arguments.isSet("--recovery-key") else {
            throw UsageError("--recovery-key stands in for the TPM: it needs --tpm2")
        }
        let recovery = arguments.isSet("--recovery-key") ? RecoveryKey.generate() : nil
        let result = try Vault.initialize(backing: backing, protectionClass: protectionClass,
                                          deviceKeyPath: arguments.value("--device-key"),
                                          sealer: TPMDeviceKeySealer(tcti: nil, pcrs: pcrs), sealing: sealing, recovery: recovery,
                                          passcode: { () throws(PasscodeInputError) in noPasscode ? nil : try reader.readNew() },
                                          kdf: kdf, contentAEAD: cipher)
        print("Created a protfs vault in \(backing) (vault id \(result.vaultID), root class \(result.rootClass),"
              + " cipher \(result.contentAEAD.name)).")
        if noPasscode {
            writeError("protfs init: this vault has no passcode: whoever holds the device key reads every class; "
                       + "set one later with 'protfsctl passwd MOUNTPOINT'.\n")
        }
        if result.deviceKeyCreated && sealing {
            writeError("protfs init: sealed a new device key by this machine's TPM into \(result.deviceKeyPath)"
                       + (pcrs.isEmpty ? "" : ", bound to PCR \(pcrs)") + ": the file is not the key and opens nothing "
                       + "elsewhere. A cleared or replaced TPM loses the vault, class none included"
                       + (recovery == nil ? ": 'protfs backup' moves it to another machine.\n" : ", unless the recovery key below stands in.\n"))
        } else if result.deviceKeyCreated {
            writeError("protfs init: " + DeviceKeyAdvice.created(result.deviceKeyPath))
        }
        if let recovery { RecoveryKeyOutput.show(recovery) }
    }

    static func parsePCRs(_ list: String?, sealing: Bool) throws -> PCRSelection {
        guard let list else { return .none }
        guard sealing else { throw UsageError("--tpm2-pcrs binds a sealed device key: it needs --tpm2") }
        guard let pcrs = PCRSelection(parsing: list) else {
            throw UsageError("invalid --tpm2-pcrs '\(list)': give PCR numbers from 0 to 23, separated by ',' or '+'")
        }
        return pcrs
    }

    static func parseClass(_ spelling: String) throws -> ProtectionClass {
        guard let found = ProtectionClass(spelling: spelling) else {
            let names = ProtectionClass.allCases.map(\.name).joined(separator: ", ")
            throw UsageError("unknown class '\(spelling)' for --class; use one of \(names), their NSFileProtection names, or A-D")
        }
        return found
    }

    private static func parseCipher(_ name: String) throws -> ContentAEAD {
        guard let found = ContentAEAD(name: name) else {
            throw UsageError("unknown cipher '\(name)' for --cipher; use " + ContentAEAD.allCases.map(\.name).joined(separator: " or "))
        }
        return found
    }

    private static func parseKDF(_ name: String) throws -> Argon2idParameters {
        switch name {
        case "moderate": .moderate
        case "interactive": .interactive
        default: throw UsageError("unknown value '\(name)' for --kdf; use interactive or moderate")
        }
    }
}
