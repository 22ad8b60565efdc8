import ProtfsCommandLine
import ProtfsSecretService

/// `protfsctl secret-service [MOUNTPOINT] [--replace] [--askpass PROGRAM] [--prompt-timeout
/// SECONDS]`: serves `org.freedesktop.secrets` on the session bus over the caller's items in
/// the keychain vault, in the foreground (docs/SECRETS.md).
enum SecretServiceCommand {
    static let command = Command(name: "secret-service", synopsis: "[MOUNTPOINT] [--replace] [--askpass PROGRAM] [--prompt-timeout SECONDS]",
                                 valueOptions: ["--askpass", "--prompt-timeout"], flags: ["--replace"]) { arguments in
        guard arguments.operands.count <= 1 else { throw UsageError("unexpected argument '\(arguments.operands[1])'") }
        var timeout = Duration.seconds(60)
        if let text = arguments.value("--prompt-timeout") {
            guard let seconds = Int(text), (1...3600).contains(seconds) else {
                throw UsageError("--prompt-timeout needs 1 to 3600 seconds, not '\(text)'")
            }
            timeout = .seconds(seconds)
        }
        let provider = SecretServiceProvider(.init(mountpoint: arguments.operands.first, replace: arguments.isSet("--replace"),
                                                   askpass: arguments.value("--askpass"), promptTimeout: timeout))
        try provider.run()
    }
}
