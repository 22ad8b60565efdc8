import Foundation
import ProtfsDomain

extension FileProtectionType {
    /// Foundation's value for a protfs class: its raw value is Apple's constant name, which
    /// protfs accepts as an alias of the class.
    init(_ protectionClass: ProtectionClass) {
        self.init(rawValue: protectionClass.appleName)
    }

    /// The protfs class of this value; nil for a value Foundation does not define.
    var protectionClass: ProtectionClass? {
        ProtectionClass.allCases.first { $0.appleName == rawValue }
    }
}

extension Data.WritingOptions {
    /// The class the protection bits ask for, nil when they ask for none. The bits are a
    /// value under `fileProtectionMask`, not independent flags (`.completeFileProtection`
    /// is 0x2 and `.completeFileProtectionUnlessOpen` 0x3 in the top nibble).
    func requestedProtection() throws(DataProtectionError) -> ProtectionClass? {
        let bits = Data.WritingOptions(rawValue: rawValue & Data.WritingOptions.fileProtectionMask.rawValue)
        switch bits {
        case []: return nil
        case .completeFileProtection: return .complete
        case .completeFileProtectionUnlessOpen: return .completeUnlessOpen
        case .completeFileProtectionUntilFirstUserAuthentication: return .completeUntilFirstUserAuthentication
        case .noFileProtection: return ProtectionClass.none
        default: throw .unknownProtection(String(bits.rawValue, radix: 16))
        }
    }

    /// These options without the protection bits: what Foundation itself is asked to do.
    var withoutProtection: Data.WritingOptions {
        Data.WritingOptions(rawValue: rawValue & ~Data.WritingOptions.fileProtectionMask.rawValue)
    }
}

/// The value of a `.protectionKey` attribute: Foundation's `FileProtectionType`, or the
/// constant's name as a string (how Objective-C code and property lists spell it).
func protectionClass(ofAttribute value: Any) throws(DataProtectionError) -> ProtectionClass {
    if let type = value as? FileProtectionType, let found = type.protectionClass { return found }
    if let name = value as? String, let found = FileProtectionType(rawValue: name).protectionClass { return found }
    throw .unknownProtection(String(describing: value))
}
