import ProtfsCommandLine
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain

/// `protfs init BACKING [--class CLASS] [--device-key PATH] [--passcode-file FILE | --passcode-command CMD |
/// --no-passcode] [--kdf interactive|moderate] [--cipher aes-256-gcm|xchacha20-poly1305]`: creates a vault, without a
/// passcode when asked (docs/BACKUP.md), its contents sealed with the cipher asked for or the one this CPU runs
/// fastest (docs/FORMAT.md, "Contents").
enum InitCommand {
    static let command = Command(
        name: "init",
        synopsis: "BACKING [--class CLASS] [--device-key PATH] [--passcode-file FILE | --passcode-command CMD | --no-passcode] "
            + "[--kdf interactive|moderate] [--cipher aes-256-gcm|xchacha20-poly1305]",
        valueOptions: PasscodeReader.options.union(["--class", "--device-key", "--kdf", "--cipher"]),
        flags: ["--no-passcode"],
        run: run)

    private static func run(_ arguments: ParsedArguments) throws {
        let backing = try arguments.operands("BACKING")[0]
        let protectionClass = try arguments.value("--class").map(parseClass) ?? .defaultForNewVaults
        let kdf = try parseKDF(arguments.value("--kdf") ?? "moderate")
        let cipher = try arguments.value("--cipher").map(parseCipher) ?? .preferredOnThisCPU
        let noPasscode = arguments.isSet("--no-passcode")
        let reader = try PasscodeReader(options: arguments, vault: backing)
        let result = try Vault.initialize(backing: backing, protectionClass: protectionClass,
                                          deviceKeyPath: arguments.value("--device-key"),
                                          passcode: { () throws(PasscodeInputError) in noPasscode ? nil : try reader.readNew() }, kdf: kdf,
                                          contentAEAD: cipher)
        print("Created a protfs vault in \(backing) (vault id \(result.vaultID), root class \(result.rootClass),"
              + " cipher \(result.contentAEAD.name)).")
        if noPasscode {
            writeError("protfs init: this vault has no passcode: whoever holds the device key reads every class; "
                       + "set one later with 'protfsctl passwd MOUNTPOINT'.\n")
        }
        if result.deviceKeyCreated {
            writeError("protfs init: created the device key \(result.deviceKeyPath). Back it up and keep it private: "
                       + "losing it loses the vault, class none included.\n")
        }
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
