import Glibc
import ProtfsDomain

/// The JSON headers of requests and replies (see ControlProtocol.swift). Decoding is
/// strict: the discriminator must be known and the keys must be exactly the ones its kind
/// has, so a malformed or foreign message is refused rather than half understood.
struct WireKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == WireKey {
    /// Throws unless the container holds exactly `expected` (plus the discriminator).
    func requireKeys(_ expected: Set<String>, discriminator: String) throws {
        let found = Set(allKeys.map(\.stringValue))
        let allowed = expected.union([discriminator])
        guard found == allowed else {
            let unexpected = found.subtracting(allowed).sorted()
            let missing = allowed.subtracting(found).sorted()
            let what = unexpected.isEmpty ? "missing key \(missing[0])" : "unexpected key \(unexpected[0])"
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: what))
        }
    }

    func unknownKind(_ kind: String, of discriminator: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: "unknown \(discriminator) '\(kind)'"))
    }
}

extension ControlRequest: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        let name = try container.decode(String.self, forKey: WireKey("request"))
        guard let kind = ControlRequestKind(rawValue: name) else { throw container.unknownKind(name, of: "request") }
        func keys(_ names: String...) throws { try container.requireKeys(Set(names), discriminator: "request") }
        switch kind {
        case .status: try keys(); self = .status
        case .lock: try keys("mode"); self = .lock(try container.decode(LockRequest.self, forKey: WireKey("mode")))
        case .unlock: try keys(); self = .unlock
        case .passwd: try keys(); self = .changePasscode
        case .unlockWithoutPasscode: try keys(); self = .unlockWithoutPasscode
        case .setPasscode: try keys(); self = .setPasscode
        case .removePasscode: try keys(); self = .removePasscode
        case .backingPath:
            try keys("components")
            let components = try container.decode([[UInt8]].self, forKey: WireKey("components"))
            guard let problem = Self.problem(inComponents: components) else {
                self = .backingPath(components)
                return
            }
            throw DecodingError.dataCorrupted(.init(codingPath: [WireKey("components")], debugDescription: problem))
        case .watch: try keys(); self = .watch
        case .backup: try keys("passcode"); self = .backup(passcode: try container.decode(Bool.self, forKey: WireKey("passcode")))
        case .itemAdd:
            try keys("uid", "item")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     .add(try container.decodeItem(forKey: "item", withTimes: false))))
        case .itemGet, .itemDelete:
            try keys("uid", "service", "account")
            let service = try container.decode(String.self, forKey: WireKey("service"))
            let account = try container.decode(String.self, forKey: WireKey("account"))
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     kind == .itemGet ? .get(service: service, account: account)
                                                       : .delete(service: service, account: account)))
        case .itemUpdate:
            try keys("uid", "service", "account", "changes", "secret")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     .update(service: try container.decode(String.self, forKey: WireKey("service")),
                                             account: try container.decode(String.self, forKey: WireKey("account")),
                                             changes: try container.decodeChanges(forKey: "changes"),
                                             changesSecret: try container.decode(Bool.self, forKey: WireKey("secret")))))
        case .itemList:
            try keys("uid", "service")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     .list(service: try container.decodeIfPresent(String.self, forKey: WireKey("service")))))
        case .itemSearch:
            let query = try container.itemQuery(others: ["uid"], discriminator: "request")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")), .search(query)))
        case .itemUpdateMatches:
            try keys("uid", "match", "changes", "rename", "secret")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     .updateMatches(try container.decodeQuery(forKey: "match"),
                                                    changes: try container.decodeChanges(forKey: "changes"),
                                                    rename: try container.decodeRename(forKey: "rename"),
                                                    changesSecret: try container.decode(Bool.self, forKey: WireKey("secret")))))
        case .itemDeleteMatches:
            try keys("uid", "match")
            self = .item(ItemRequest(uid: try container.decodeIfPresent(UInt32.self, forKey: WireKey("uid")),
                                     .deleteMatches(try container.decodeQuery(forKey: "match"))))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: WireKey.self)
        switch self {
        case .status: try container.encode(ControlRequestKind.status, forKey: WireKey("request"))
        case .lock(let mode):
            try container.encode(ControlRequestKind.lock, forKey: WireKey("request"))
            try container.encode(mode, forKey: WireKey("mode"))
        case .unlock: try container.encode(ControlRequestKind.unlock, forKey: WireKey("request"))
        case .changePasscode: try container.encode(ControlRequestKind.passwd, forKey: WireKey("request"))
        case .unlockWithoutPasscode: try container.encode(ControlRequestKind.unlockWithoutPasscode, forKey: WireKey("request"))
        case .setPasscode: try container.encode(ControlRequestKind.setPasscode, forKey: WireKey("request"))
        case .removePasscode: try container.encode(ControlRequestKind.removePasscode, forKey: WireKey("request"))
        case .backingPath(let components):
            try container.encode(ControlRequestKind.backingPath, forKey: WireKey("request"))
            try container.encode(components, forKey: WireKey("components"))
        case .watch: try container.encode(ControlRequestKind.watch, forKey: WireKey("request"))
        case .backup(let passcode):
            try container.encode(ControlRequestKind.backup, forKey: WireKey("request"))
            try container.encode(passcode, forKey: WireKey("passcode"))
        case .item(let request):
            try container.encode(request.kind, forKey: WireKey("request"))
            try container.encode(request.uid, forKey: WireKey("uid"))
            switch request.operation {
            case .add(let attributes):
                try container.encodeItem(attributes, forKey: "item", withTimes: false)
            case .get(let service, let account), .delete(let service, let account):
                try container.encode(service, forKey: WireKey("service"))
                try container.encode(account, forKey: WireKey("account"))
            case .update(let service, let account, let changes, let changesSecret):
                try container.encode(service, forKey: WireKey("service"))
                try container.encode(account, forKey: WireKey("account"))
                try container.encodeChanges(changes, forKey: "changes")
                try container.encode(changesSecret, forKey: WireKey("secret"))
            case .list(let service):
                try container.encode(service, forKey: WireKey("service"))
            case .search(let query):
                try container.encodeQuery(query)
            case .updateMatches(let query, let changes, let rename, let changesSecret):
                var match = container.nestedContainer(keyedBy: WireKey.self, forKey: WireKey("match"))
                try match.encodeQuery(query)
                try container.encodeChanges(changes, forKey: "changes")
                try container.encodeRename(rename, forKey: "rename")
                try container.encode(changesSecret, forKey: WireKey("secret"))
            case .deleteMatches(let query):
                var match = container.nestedContainer(keyedBy: WireKey.self, forKey: WireKey("match"))
                try match.encodeQuery(query)
            }
        }
    }

    /// Names from the kernel's side of a path: 1 to 255 bytes, no `/` or NUL, not `.` or
    /// `..`; at most as many as a PATH_MAX path can hold.
    static func problem(inComponents components: [[UInt8]]) -> String? {
        guard components.count <= ControlLimits.maximumPathComponents else { return "too many path components" }
        for name in components {
            guard (1...ControlLimits.maximumNameLength).contains(name.count) else { return "a path component has \(name.count) bytes" }
            guard !name.contains(0x2F), !name.contains(0) else { return "a path component contains '/' or NUL" }
            guard name != [0x2E], name != [0x2E, 0x2E] else { return "a path component is '.' or '..'" }
        }
        return nil
    }
}

extension ControlReply: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        let name = try container.decode(String.self, forKey: WireKey("reply"))
        guard let kind = ControlReplyKind(rawValue: name) else { throw container.unknownKind(name, of: "reply") }
        func keys(_ names: String...) throws { try container.requireKeys(Set(names), discriminator: "reply") }
        switch kind {
        case .done: try keys(); self = .done
        case .status: try keys("status"); self = .status(try container.decode(StatusReport.self, forKey: WireKey("status")))
        case .backingPath: try keys("path"); self = .backingPath(try container.decode(String.self, forKey: WireKey("path")))
        case .failure:
            try keys("exitCode", "message")
            let code = try container.decode(Int32.self, forKey: WireKey("exitCode"))
            guard let exitCode = ExitCode(rawValue: code), exitCode != .success else {
                throw DecodingError.dataCorrupted(.init(codingPath: [WireKey("exitCode")], debugDescription: "exit code \(code) is not a failure"))
            }
            self = .failure(ControlFailure(exitCode, try container.decode(String.self, forKey: WireKey("message"))))
        case .watching: try keys("state"); self = .watching(try container.decode(LockState.self, forKey: WireKey("state")))
        case .event: try keys("event"); self = .event(try container.decode(LockEvent.self, forKey: WireKey("event")))
        case .item: try keys("item"); self = .item(try container.decodeItem(forKey: "item", withTimes: true))
        case .items: try keys("items"); self = .items(try container.decodeItems(forKey: "items"))
        case .itemsWithSecrets:
            try keys("items", "secretLengths")
            let items = try container.decodeItems(forKey: "items")
            let lengths = try container.decode([Int].self, forKey: WireKey("secretLengths"))
            guard lengths.count == items.count, lengths.allSatisfy({ (0...ItemLimits.maximumSecretLength).contains($0) }),
                  lengths.reduce(0, +) <= ItemLimits.maximumMatchedSecretBytes else {
                throw DecodingError.dataCorrupted(.init(codingPath: [WireKey("secretLengths")],
                                                        debugDescription: "secret lengths that do not fit the items"))
            }
            self = .itemsWithSecrets(items, secretLengths: lengths)
        case .itemsWithLocks:
            try keys("items", "locked", "state")
            let items = try container.decodeItems(forKey: "items")
            let locked = try container.decode([Bool].self, forKey: WireKey("locked"))
            guard locked.count == items.count else {
                throw DecodingError.dataCorrupted(.init(codingPath: [WireKey("locked")], debugDescription: "lock flags that do not fit the items"))
            }
            self = .itemsWithLocks(items, locked: locked, state: try container.decode(LockState.self, forKey: WireKey("state")))
        case .backupProgress:
            try keys("objects", "bytes")
            self = .backupProgress(objects: try container.decode(UInt64.self, forKey: WireKey("objects")),
                                   bytes: try container.decode(UInt64.self, forKey: WireKey("bytes")))
        case .backedUp:
            try keys("itemsLeftOut", "otherUsersItemsLeftOut")
            self = .backedUp(BackupItemsLeftOut(deviceBound: try container.decode(Int.self, forKey: WireKey("itemsLeftOut")),
                                                otherUsers: try container.decode(Int.self,
                                                                                 forKey: WireKey("otherUsersItemsLeftOut"))))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: WireKey.self)
        switch self {
        case .done: try container.encode(ControlReplyKind.done, forKey: WireKey("reply"))
        case .status(let report):
            try container.encode(ControlReplyKind.status, forKey: WireKey("reply"))
            try container.encode(report, forKey: WireKey("status"))
        case .backingPath(let path):
            try container.encode(ControlReplyKind.backingPath, forKey: WireKey("reply"))
            try container.encode(path, forKey: WireKey("path"))
        case .failure(let failure):
            try container.encode(ControlReplyKind.failure, forKey: WireKey("reply"))
            try container.encode(failure.exitCode.rawValue, forKey: WireKey("exitCode"))
            try container.encode(failure.message, forKey: WireKey("message"))
        case .watching(let state):
            try container.encode(ControlReplyKind.watching, forKey: WireKey("reply"))
            try container.encode(state, forKey: WireKey("state"))
        case .event(let event):
            try container.encode(ControlReplyKind.event, forKey: WireKey("reply"))
            try container.encode(event, forKey: WireKey("event"))
        case .item(let attributes):
            try container.encode(ControlReplyKind.item, forKey: WireKey("reply"))
            try container.encodeItem(attributes, forKey: "item", withTimes: true)
        case .items(let list):
            try container.encode(ControlReplyKind.items, forKey: WireKey("reply"))
            try container.encodeItems(list, forKey: "items")
        case .itemsWithSecrets(let list, let lengths):
            try container.encode(ControlReplyKind.itemsWithSecrets, forKey: WireKey("reply"))
            try container.encodeItems(list, forKey: "items")
            try container.encode(lengths, forKey: WireKey("secretLengths"))
        case .itemsWithLocks(let list, let locked, let state):
            try container.encode(ControlReplyKind.itemsWithLocks, forKey: WireKey("reply"))
            try container.encodeItems(list, forKey: "items")
            try container.encode(locked, forKey: WireKey("locked"))
            try container.encode(state, forKey: WireKey("state"))
        case .backupProgress(let objects, let bytes):
            try container.encode(ControlReplyKind.backupProgress, forKey: WireKey("reply"))
            try container.encode(objects, forKey: WireKey("objects"))
            try container.encode(bytes, forKey: WireKey("bytes"))
        case .backedUp(let leftOut):
            try container.encode(ControlReplyKind.backedUp, forKey: WireKey("reply"))
            try container.encode(leftOut.deviceBound, forKey: WireKey("itemsLeftOut"))
            try container.encode(leftOut.otherUsers, forKey: WireKey("otherUsersItemsLeftOut"))
        }
    }
}
