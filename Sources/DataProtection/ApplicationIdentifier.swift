import Foundation
import Glibc
import Synchronization

extension ProtfsKeychain {
    /// The variable that names the program's application identifier, before its Info.plist.
    public static let applicationIdentifierVariable = "PROTFS_APPLICATION_IDENTIFIER"

    private static let givenIdentifier = Mutex<String?>(nil)

    /// The application identifier chosen in code; when nil (the default), the program's is
    /// `PROTFS_APPLICATION_IDENTIFIER`, else `CFBundleIdentifier` of the Info.plist Foundation
    /// reads beside the executable (`Bundle.main.bundleIdentifier`), else the executable's
    /// file name. Setting it is safe from any thread, unlike `setenv`.
    public static var givenApplicationIdentifier: String? {
        get { givenIdentifier.withLock { $0 } }
        set { givenIdentifier.withLock { $0 = newValue } }
    }

    /// The program's application identifier: the access group of the items it adds without
    /// `kSecAttrAccessGroup`, and the only group its queries without one reach
    /// (docs/DATAPROTECTION.md). An accident guard, as on iOS, not a boundary: every program of
    /// a user may name any group.
    public static var applicationIdentifier: String {
        if let given = givenApplicationIdentifier, !given.isEmpty { return given }
        if let named = getenv(applicationIdentifierVariable).map({ String(cString: $0) }), !named.isEmpty { return named }
        if let bundled = Bundle.main.bundleIdentifier, !bundled.isEmpty { return bundled }
        return executableName
    }

    /// The variable that names the program's other access groups, separated by commas.
    public static let accessGroupsVariable = "PROTFS_KEYCHAIN_ACCESS_GROUPS"

    /// The groups a query without `kSecAttrAccessGroup` reaches, as an iOS program's
    /// entitlements list them: its application identifier first, then those named in
    /// `PROTFS_KEYCHAIN_ACCESS_GROUPS` and in the `keychain-access-groups` array of its
    /// Info.plist (the entitlement's name). Configuration, not a grant: any program may name
    /// any group.
    public static var accessGroups: [String] {
        var groups = [applicationIdentifier]
        let named = getenv(accessGroupsVariable).map { String(cString: $0).split(separator: ",").map(String.init) } ?? []
        let listed = Bundle.main.object(forInfoDictionaryKey: "keychain-access-groups") as? [String] ?? []
        for group in named + listed where !group.isEmpty && !groups.contains(group) { groups.append(group) }
        return groups
    }

    /// The stand-in for a program without an Info.plist: its executable's file name, as the
    /// kernel knows it (`/proc/self/exe`), else as it was started.
    static var executableName: String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        let name = (path as NSString).lastPathComponent
        return name.isEmpty ? "unnamed" : name
    }
}
