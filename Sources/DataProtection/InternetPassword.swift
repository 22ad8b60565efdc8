import Foundation
import ProtfsDomain

/// What names an internet password, after Apple's uniqueness rule: its account with its
/// server, protocol, port, path, authentication type and security domain. protfs names an
/// item by its service and account, so the other six are folded into the service (a prefix no
/// person types, then a JSON array), and kept as lookup attributes too, where searches and
/// the returned attributes find them.
struct InternetPassword: Equatable {
    var server = ""
    var `protocol` = ""
    var port = 0
    var path = ""
    var authenticationType = ""
    var securityDomain = ""

    /// The lookup attribute that marks an internet password, and its value.
    static let classAttribute = "protfs:class"
    static let classValue = kSecClassInternetPassword as String
    private static let servicePrefix = "\u{1}inet "

    /// The item's service: unique for each combination of the six.
    var service: String {
        let fields = [server, `protocol`, String(port), path, authenticationType, securityDomain]
        let json = (try? JSONEncoder().encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return Self.servicePrefix + json
    }

    /// The lookup attributes kept with the item, by Apple's keys.
    var lookupAttributes: [String: String] {
        let fields: [(CFString, String)] = [(kSecAttrServer, server), (kSecAttrProtocol, `protocol`), (kSecAttrPort, String(port)),
                                            (kSecAttrPath, path), (kSecAttrAuthenticationType, authenticationType),
                                            (kSecAttrSecurityDomain, securityDomain)]
        var map = Dictionary(uniqueKeysWithValues: fields.map { ($0.0 as String, $0.1) })
        map[Self.classAttribute] = Self.classValue
        return map
    }

    /// The internet password an item holds; nil for a generic password.
    init?(_ item: ItemAttributes) {
        let map = item.lookupAttributes
        guard map[Self.classAttribute] == Self.classValue else { return nil }
        server = map[kSecAttrServer as String] ?? ""
        `protocol` = map[kSecAttrProtocol as String] ?? ""
        port = map[kSecAttrPort as String].flatMap { Int($0) } ?? 0
        path = map[kSecAttrPath as String] ?? ""
        authenticationType = map[kSecAttrAuthenticationType as String] ?? ""
        securityDomain = map[kSecAttrSecurityDomain as String] ?? ""
    }

    init() {}

    /// The attributes iOS returns for it, besides those every item has.
    var attributeDictionary: [String: Any] {
        var attributes: [String: Any] = [kSecAttrServer as String: server, kSecAttrPort as String: port]
        for (key, value) in [(kSecAttrProtocol, `protocol`), (kSecAttrPath, path), (kSecAttrAuthenticationType, authenticationType),
                             (kSecAttrSecurityDomain, securityDomain)] where !value.isEmpty {
            attributes[key as String] = value
        }
        return attributes
    }
}

/// The internet password attributes a query names; nil for each it does not.
struct InternetPasswordQuery: Equatable {
    var server: String?
    var `protocol`: String?
    var port: Int?
    var path: String?
    var authenticationType: String?
    var securityDomain: String?

    /// Reads one of the six; false for another key.
    mutating func read(_ entry: QueryValue) throws(KeychainStatus) -> Bool {
        switch entry.key {
        case kSecAttrServer: server = try entry.string()
        case kSecAttrProtocol: `protocol` = try entry.string()
        case kSecAttrPort:
            let number = try entry.number()
            guard number >= 0, number <= 65_535 else { throw .param("kSecAttrPort is \(number), not a port (0 to 65535)") }
            port = number
        case kSecAttrPath: path = try entry.string()
        case kSecAttrAuthenticationType: authenticationType = try entry.string()
        case kSecAttrSecurityDomain: securityDomain = try entry.string()
        default: return false
        }
        return true
    }

    /// The internet password `SecItemAdd` creates: what is not given is empty (port 0).
    var newPassword: InternetPassword {
        var password = InternetPassword()
        password.server = server ?? ""
        password.protocol = `protocol` ?? ""
        password.port = port ?? 0
        password.path = path ?? ""
        password.authenticationType = authenticationType ?? ""
        password.securityDomain = securityDomain ?? ""
        return password
    }

    /// The lookup attributes an item must have to match: the class's, and each one given.
    var lookupAttributes: [String: String] {
        var map = [InternetPassword.classAttribute: InternetPassword.classValue]
        for (key, value) in [(kSecAttrServer, server), (kSecAttrProtocol, `protocol`), (kSecAttrPort, port.map(String.init)),
                             (kSecAttrPath, path), (kSecAttrAuthenticationType, authenticationType),
                             (kSecAttrSecurityDomain, securityDomain)] {
            map[key as String] = value
        }
        return map
    }
}
