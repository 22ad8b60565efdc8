/// The object paths the provider serves (docs/SECRETS.md): the service, its one collection
/// (under its own name and under every alias, as `/org/freedesktop/secrets/aliases/default`
/// which libsecret uses without asking), items below a collection, sessions and prompts.
enum ObjectPaths {
    static let root = "/org/freedesktop/secrets"
    static let collection = root + "/collection/default"
    static let aliasPrefix = root + "/aliases/"
    static let promptPrefix = root + "/prompt/p"
    static let none = "/"

    /// What a path names.
    enum Object: Equatable {
        case service
        case collection
        case item(pathElement: String)
        case session(String)
        case prompt(String)
        case unknown
    }

    static func classify(_ path: String, aliases: Set<String>) -> Object {
        if path == root { return .service }
        if path.hasPrefix(SecretSessions.pathPrefix) { return .session(path) }
        if path.hasPrefix(promptPrefix) { return .prompt(path) }
        for base in [collection] + aliases.map({ aliasPrefix + $0 }) {
            if path == base { return .collection }
            if path.hasPrefix(base + "/"), let element = path.split(separator: "/").last, path == base + "/" + element,
               element.hasPrefix("i") {
                return .item(pathElement: String(element))
            }
        }
        return .unknown
    }

    static func item(_ key: ItemKey) -> String { collection + "/" + key.pathElement }
}
