import Foundation
import ProtfsSystem

/// Foundation's errors for what a system call answered, as `FileManager` and `Data` throw
/// them: the lock's `EACCES` is `CocoaError.fileReadNoPermission` (257) for a read and
/// `.fileWriteNoPermission` (513) for a write, with the path in `NSFilePathErrorKey`.
enum FileErrors {
    enum Access { case reading, writing }

    static func cocoa(_ errno: Errno, path: String, _ access: Access) -> CocoaError {
        let code: CocoaError.Code
        switch (errno, access) {
        case (.permissionDenied, .reading), (.notPermitted, .reading): code = .fileReadNoPermission
        case (.permissionDenied, .writing), (.notPermitted, .writing): code = .fileWriteNoPermission
        case (.noEntry, _), (.notDirectory, .reading): code = .fileNoSuchFile
        case (.exists, .writing): code = .fileWriteFileExists
        case (.noSpace, .writing): code = .fileWriteOutOfSpace
        case (Errno(EROFS), .writing): code = .fileWriteVolumeReadOnly
        case (.nameTooLong, .writing): code = .fileWriteInvalidFileName
        case (_, .reading): code = .fileReadUnknown
        case (_, .writing): code = .fileWriteUnknown
        }
        return CocoaError(code, userInfo: [
            NSFilePathErrorKey: path,
            NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(errno.rawValue)),
        ])
    }
}
