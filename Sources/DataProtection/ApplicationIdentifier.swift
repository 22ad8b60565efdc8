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

    /// The stand-in for a program without an Info.plist: its executable's file name, as the
    /// kernel knows it (`/proc/self/exe`), else as it was started.
    static var executableName: String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        let name = (path as NSString).lastPathComponent
        return name.isEmpty ? "unnamed" : name
    }
}
