import Glibc
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// Recording findings and, under `--repair`, applying their remedies: each one touches only
/// the object the finding is about.
extension VaultChecker {
    /// Records a finding; with `repair`, runs `remedy` and keeps what it did (or why it failed).
    func record(_ problem: Problem, at location: Location,
                remedy: (() throws(Errno) -> VaultFinding.Outcome)? = nil) {
        var finding = VaultFinding(location: location, problem: problem)
        if repair, let remedy {
            do { finding.outcome = try remedy() } catch { finding.outcome = .repairFailed(error) }
        }
        report.findings.append(finding)
    }

    /// The hint sealed again from the truth (`actual`: the header's class, or `protfs.dir`'s).
    func rewriteClassHint(_ problem: Problem, to actual: ProtectionClass, of object: FileDescriptor, objectID: ObjectID,
                          location: Location) {
        record(problem, at: location) { () throws(Errno) in
            try ClassHint.write(actual, to: object, objectID: objectID, keys: self.keys)
            return .rewroteClassHint
        }
    }

    /// An attribute whose name or value does not open holds nothing readable: it goes.
    func removeAttribute(_ problem: Problem, _ backingName: String, of object: FileDescriptor, location: Location) {
        record(problem, at: location) { () throws(Errno) in
            try object.removeExtendedAttribute(backingName)
            return .removed
        }
    }

    /// A format-1 symlink rewritten in format 3 for its location (`SymlinkTarget.upgrade`),
    /// the directory synced.
    func upgradeSymlink(_ name: String, status: stat, in parent: FileDescriptor, target: [UInt8],
                        at symlinkLocation: SymlinkLocation, formerTarget: String) throws(Errno) {
        let newTarget = try SymlinkTarget.upgrade(name, in: parent, status: status, target: target, at: symlinkLocation,
                                                  formerTarget: formerTarget, keys: keys, root: vault.backingRoot)
        try parent.syncDirectory()
        noteLinkReference(newTarget)
    }

    /// An object the mount cannot read leaves the mount's view, kept as it is.
    func moveToLostAndFound(_ entry: String, in parent: FileDescriptor, location: Location, problem: Problem) {
        record(problem, at: location) { () throws(Errno) in
            .moved(to: try self.lostAndFound.move(entry, in: parent, backingPath: location.backingPath, reason: problem.description))
        }
    }
}
