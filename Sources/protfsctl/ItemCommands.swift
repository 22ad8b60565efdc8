import Foundation
import ProtfsCommandLine
import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain

/// `protfsctl item add|get|update|delete|list` (docs/CONTROL.md): keychain items in the
/// vault, over the control socket, each for the caller's own uid (root: `--uid`).
enum ItemCommands {
    private static let identity: Set<String> = ["--service", "--account", "--uid"]
    private static let attributes: Set<String> = ["--accessible", "--label", "--description", "--comment", "--generic-file",
                                                  "--attributes"]

    static let add = Command(
        name: "item add",
        synopsis: "MOUNTPOINT --service S --account A [--accessible V] [--label L] [--description D] [--comment C] "
            + "[--generic-file F] [--attributes JSON] [--secret-file F] [--uid UID]",
        valueOptions: identity.union(attributes).union(["--secret-file"])
    ) { arguments in
        let input = ItemInput(arguments: arguments)
        let mountpoint = try input.mountpoint
        let item = ItemAttributes(service: try input.required("--service"), account: try input.required("--account"),
                                  label: arguments.value("--label") ?? "", description: arguments.value("--description") ?? "",
                                  comment: arguments.value("--comment") ?? "", generic: try input.generic ?? [],
                                  accessibility: try input.accessibility ?? .default,
                                  lookupAttributes: try input.lookupAttributes ?? [:])
        let uid = try input.uid
        let client = try ControlClient(mountpoint: mountpoint)
        let secret = try input.secret()
        try client.perform(.item(ItemRequest(uid: uid, .add(item))), secrets: [secret])
    }

    static let get = Command(name: "item get", synopsis: "MOUNTPOINT --service S --account A [--json] [--uid UID]",
                             valueOptions: identity, flags: ["--json"]) { arguments in
        let input = ItemInput(arguments: arguments)
        let client = try ControlClient(mountpoint: try input.mountpoint)
        let request = ItemRequest(uid: try input.uid, .get(service: try input.required("--service"),
                                                            account: try input.required("--account")))
        let message = try client.exchange(.item(request))
        guard case .item(let item) = message.reply, let secret = message.secret else { throw client.unexpected(message.reply) }
        if arguments.isSet("--json") {
            try ItemOutput.writeJSON(item, secret: secret)
        } else {
            secret.withUnsafeBytes { _ = writeOutput($0) }
        }
    }

    static let update = Command(
        name: "item update",
        synopsis: "MOUNTPOINT --service S --account A [--accessible V] [--label L] [--description D] [--comment C] "
            + "[--generic-file F] [--attributes JSON] [--secret-file F | --secret-stdin] [--uid UID]",
        valueOptions: identity.union(attributes).union(["--secret-file"]), flags: ["--secret-stdin"]
    ) { arguments in
        let input = ItemInput(arguments: arguments)
        let mountpoint = try input.mountpoint
        if arguments.isSet("--secret-stdin") && arguments.value("--secret-file") != nil {
            throw UsageError("give either --secret-file or --secret-stdin")
        }
        let changes = ItemChanges(label: arguments.value("--label"), description: arguments.value("--description"),
                                  comment: arguments.value("--comment"), generic: try input.generic,
                                  accessibility: try input.accessibility, lookupAttributes: try input.lookupAttributes)
        let changesSecret = arguments.isSet("--secret-stdin") || arguments.value("--secret-file") != nil
        let request = ItemRequest(uid: try input.uid, .update(service: try input.required("--service"),
                                                               account: try input.required("--account"),
                                                               changes: changes, changesSecret: changesSecret))
        let client = try ControlClient(mountpoint: mountpoint)
        try client.perform(.item(request), secrets: changesSecret ? [try input.secret()] : [])
    }

    static let delete = Command(name: "item delete", synopsis: "MOUNTPOINT --service S --account A [--uid UID]",
                                valueOptions: identity) { arguments in
        let input = ItemInput(arguments: arguments)
        let client = try ControlClient(mountpoint: try input.mountpoint)
        try client.perform(.item(ItemRequest(uid: try input.uid, .delete(service: try input.required("--service"),
                                                                          account: try input.required("--account")))))
    }

    /// `--attributes` makes it a search: the items that have every one of those.
    static let list = Command(name: "item list", synopsis: "MOUNTPOINT [--service S] [--attributes JSON] [--json] [--uid UID]",
                              valueOptions: ["--service", "--attributes", "--uid"], flags: ["--json"]) { arguments in
        let input = ItemInput(arguments: arguments)
        let client = try ControlClient(mountpoint: try input.mountpoint)
        let operation: ItemRequest.Operation
        if let lookupAttributes = try input.lookupAttributes {
            operation = .search(ItemQuery(service: arguments.value("--service"), lookupAttributes: lookupAttributes))
        } else {
            operation = .list(service: arguments.value("--service"))
        }
        let reply = try client.send(.item(ItemRequest(uid: try input.uid, operation)))
        guard case .items(let items) = reply else { throw client.unexpected(reply) }
        writeOutput(arguments.isSet("--json") ? try ItemOutput.json(items) : ItemOutput.text(items))
    }

    static let all = [add, get, update, delete, list]
}
