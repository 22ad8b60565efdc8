import Glibc

/// The account name of a uid, from the user database; nil when no account has it.
func accountName(of uid: UInt32) -> String? {
    guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
    return String(cString: name)
}
