import Foundation
import Glibc

/// A real user of the machine, for tests that need a uid other than root's: made with
/// `useradd` the first time (a system user with a group of its own and no home), then kept.
struct TestUser {
    let name: String
    let uid: uid_t
    let gid: gid_t

    static func named(_ name: String) throws -> TestUser {
        if getpwnam(name) == nil {
            let made = CommandRunner.run("/usr/sbin/useradd", ["--system", "--user-group", "--no-create-home",
                                                               "--shell", "/usr/sbin/nologin", name])
            // Another test process may have made it meanwhile: only its absence is a failure.
            guard made.succeeded || getpwnam(name) != nil else { throw TestFailure("useradd \(name): \(made.stderr)") }
        }
        guard let entry = getpwnam(name) else { throw TestFailure("no user \(name)") }
        return TestUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// Prefixes a command line to run it as this user, with the user's groups.
    var runs: String { "setpriv --reuid=\(uid) --regid=\(gid) --init-groups" }
}
