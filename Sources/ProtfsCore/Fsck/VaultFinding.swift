import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// One thing `fsck` found wrong (or could not look at) in a backing directory: where, what,
/// and what `--repair` did about it.
public struct VaultFinding: Sendable, Equatable {
    public let location: Location
    public let problem: Problem
    public internal(set) var outcome: Outcome = .notRepaired

    public init(location: Location, problem: Problem) {
        self.location = location
        self.problem = problem
    }

    /// Where an object is: by its mount path when its name decodes, else by its backing name
    /// in the directory that holds it. `backingPath` is relative to the backing directory
    /// (`.` for the root).
    public enum Location: Sendable, Equatable, CustomStringConvertible {
        case mount(path: [UInt8], backingPath: String)
        /// The object's own name does not decode (or is not a protfs name at all).
        case undecodable(directory: [UInt8], backingPath: String)
        /// One of the daemon's own files, which has no mount path (an out-of-line symlink target).
        case daemonFile(backingPath: String)

        public var backingPath: String {
            switch self {
            case .mount(_, let path), .undecodable(_, let path), .daemonFile(let path): path
            }
        }

        /// One line's worth: mount paths escaped so a name cannot break the output into lines.
        public var description: String {
            switch self {
            case .mount(let path, _):
                return DisplayName.escaped(path)
            case .undecodable(let directory, let backingPath):
                let parent = DisplayName.escaped(directory)
                let name = backingPath.split(separator: "/").last.map(String.init) ?? backingPath
                return (parent == "/" ? "/" : parent + "/") + "[backing name \(DisplayName.escaped(Array(name.utf8)))]"
            case .daemonFile(let backingPath):
                return "[backing \(DisplayName.escaped(Array(backingPath.utf8)))]"
            }
        }
    }

    /// What is wrong. Descriptions name no plaintext except an xattr's own name (shown to the
    /// user, never written to the backing store).
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        case directoryMetadataMissing
        case directoryMetadataDamaged
        /// The hint fails authentication: tampered, or copied from another object.
        case classHintDamaged(actual: ProtectionClass)
        case classHintWrong(hint: ProtectionClass, actual: ProtectionClass)
        case nameUndecodable
        case longNameSidecarMissing
        case longNameSidecarMismatch
        /// A long name's sidecar whose entry is gone (an interrupted removal leaves one).
        case orphanSidecar
        case header(FileHeader.Defect)
        /// A backing size no protfs file can have: it ends 1 to 40 bytes into a chunk.
        case backingSizeMalformed(Int64)
        /// The header authenticates but its wrapped key does not open under the class key.
        case fileKeyDamaged
        /// Chunks (by index) that fail authentication, out of `chunkCount`.
        case chunksDamaged([Int64], chunkCount: Int64)
        case symlinkTargetDamaged
        case attributeNameUndecodable(backingName: String)
        case attributeValueDamaged(name: [UInt8], backingName: String)
        /// An attribute's own backing xattr that the packed blob names too: a stale copy.
        case attributeShadowed(name: [UInt8], backingName: String)
        /// The blob of packed attributes fails authentication (tampered, or moved from another object).
        case packedAttributesDamaged
        /// An out-of-line symlink target no symlink refers to.
        case orphanLinkBlob
        /// A keychain item record whose structure or attributes do not authenticate here.
        case itemRecordDamaged
        /// A keychain item whose key or secret does not open under its class key.
        case itemSecretDamaged
        /// Not made by protfs: the mount never shows it and fsck leaves it alone.
        case foreign
        /// The check itself failed here: this part of the vault is not checked.
        case unreadable(operation: String, errno: Errno)
        /// A symlink target in a format this build does not know: made by a newer protfs,
        /// so neither checked nor touched.
        case symlinkTargetNewer

        /// Damage makes `fsck` exit 8 unless repaired; the other two are reported only (a
        /// foreign entry) or make it exit 1 (something it could not check).
        public var isDamage: Bool {
            switch self {
            case .foreign, .unreadable, .symlinkTargetNewer: false
            default: true
            }
        }

        /// Not checked: `fsck` exits 1 unless there is damage left.
        public var isUnchecked: Bool {
            switch self {
            case .unreadable, .symlinkTargetNewer: true
            default: false
            }
        }

        /// The first word of the finding's line.
        public var label: String {
            switch self {
            case .foreign: "foreign"
            case .unreadable, .symlinkTargetNewer: "unchecked"
            default: "damaged"
            }
        }

        public var remedy: Remedy? {
            switch self {
            case .classHintDamaged(let actual), .classHintWrong(_, let actual): .rewriteClassHint(actual)
            case .orphanSidecar: .removeSidecar
            case .attributeNameUndecodable(let backingName), .attributeValueDamaged(_, let backingName),
                 .attributeShadowed(_, let backingName):
                .removeAttribute(backingName: backingName)
            case .packedAttributesDamaged: .removeAttribute(backingName: PackedXattrs.backingName)
            case .foreign, .unreadable, .symlinkTargetNewer: nil
            default: .moveToLostAndFound
            }
        }

        public var description: String {
            switch self {
            case .directoryMetadataMissing:
                "directory metadata (protfs.dir) is missing, so the names in it cannot be read"
            case .directoryMetadataDamaged:
                "directory metadata (protfs.dir) fails authentication, so the names in it cannot be read"
            case .classHintDamaged:
                "class hint fails authentication (tampered, or copied from another object)"
            case .classHintWrong(let hint, let actual):
                "class hint says \(hint), but the object's class is \(actual)"
            case .nameUndecodable:
                "name does not decode (damaged, or moved in from another directory)"
            case .longNameSidecarMissing:
                "long name's sidecar is missing"
            case .longNameSidecarMismatch:
                "long name's sidecar does not belong to this entry"
            case .orphanSidecar:
                "long-name sidecar without its entry (left by an interrupted removal)"
            case .header(let defect):
                "\(defect)"
            case .backingSizeMalformed(let size):
                "backing size \(size) ends inside a chunk (cut or extended outside protfs)"
            case .fileKeyDamaged:
                "file key does not open under its class key"
            case .chunksDamaged(let indices, let chunkCount):
                Self.describeChunks(indices, chunkCount: chunkCount)
            case .symlinkTargetDamaged:
                "symlink target does not decode (damaged, or its out-of-line target is missing)"
            case .attributeNameUndecodable(let backingName):
                "extended attribute \(backingName) has a name that does not decode"
            case .attributeValueDamaged(let name, _):
                "value of extended attribute \(DisplayName.escaped(name)) fails authentication"
            case .attributeShadowed(let name, _):
                "extended attribute \(DisplayName.escaped(name)) is also packed; this stale copy is not used"
            case .packedAttributesDamaged:
                "packed extended attributes fail authentication (tampered, or copied from another object)"
            case .orphanLinkBlob:
                "out-of-line symlink target that no symlink refers to"
            case .itemRecordDamaged:
                "keychain item record fails authentication (tampered, or copied from another record or vault)"
            case .itemSecretDamaged:
                "keychain item's key or secret does not open under its class key"
            case .foreign:
                "not made by protfs; the mount does not show it"
            case .symlinkTargetNewer:
                "symlink target is in a format newer than this protfs knows; not checked, left as it is"
            case .unreadable(let operation, let errno):
                "cannot \(operation): \(errno); not checked"
            }
        }

        private static func describeChunks(_ indices: [Int64], chunkCount: Int64) -> String {
            let chunkSize = Int64(ContentLayout.chunkByteCount)
            guard indices.count > 1 else {
                let index = indices.first ?? 0
                return "chunk \(index) of \(chunkCount) (plaintext bytes from \(index * chunkSize)) fails authentication"
            }
            let shown = 8
            var list = indices.prefix(shown).map(String.init).joined(separator: ", ")
            if indices.count > shown { list += " and \(indices.count - shown) more" }
            return "\(indices.count) of \(chunkCount) chunks fail authentication: \(list) (plaintext bytes from \(indices[0] * chunkSize))"
        }
    }

    /// What `--repair` does about a problem.
    public enum Remedy: Sendable, Equatable, CustomStringConvertible {
        /// Seal the class the header (or `protfs.dir`) holds into the hint again.
        case rewriteClassHint(ProtectionClass)
        /// Move the object, as it is, out of the mount's view into `protfs.lost+found`.
        case moveToLostAndFound
        case removeSidecar
        case removeAttribute(backingName: String)

        public var description: String {
            switch self {
            case .rewriteClassHint: "--repair rewrites the hint"
            case .moveToLostAndFound: "--repair moves it to \(ReservedNames.lostAndFound)"
            case .removeSidecar: "--repair removes it"
            case .removeAttribute: "--repair removes the attribute"
            }
        }
    }

    public enum Outcome: Sendable, Equatable {
        case notRepaired
        case rewroteClassHint
        case removed
        /// Moved to `protfs.lost+found/<name>`.
        case moved(to: String)
        case repairFailed(Errno)

        public var isRepaired: Bool {
            switch self {
            case .rewroteClassHint, .removed, .moved: true
            case .notRepaired, .repairFailed: false
            }
        }
    }

    /// `damaged: PATH: what; remedy`, one line, for `protfs fsck`.
    public var line: String {
        var text = "\(problem.label): \(location): \(problem)"
        switch outcome {
        case .notRepaired: if let remedy = problem.remedy { text += "; \(remedy)" }
        case .rewroteClassHint: text += "; hint rewritten"
        case .removed: text += "; removed"
        case .moved(let name): text += "; moved to \(ReservedNames.lostAndFound)/\(name)"
        case .repairFailed(let errno): text += "; repair failed: \(errno)"
        }
        return text
    }
}
