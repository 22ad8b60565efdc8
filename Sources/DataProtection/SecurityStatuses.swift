import Foundation

// The Security framework's status codes, with Apple's values, and their messages.

/// No error.
public let errSecSuccess: OSStatus = 0
/// No error (the Carbon spelling).
public let noErr: OSStatus = 0
/// Not implemented on protfs: an item class other than generic passwords, or synchronizing.
public let errSecUnimplemented: OSStatus = -4
/// A parameter was missing or not valid: an unknown key, a value of the wrong type, a
/// secret or an attribute too long.
public let errSecParam: OSStatus = -50
/// Memory could not be allocated (never returned by protfs: Locksmith's errors name it).
public let errSecAllocate: OSStatus = -108
/// The user canceled (never returned by protfs, which never prompts).
public let errSecUserCanceled: OSStatus = -128
/// No protfs keychain vault: `PROTFS_KEYCHAIN` names none, and there is not exactly one
/// protfs mount, or its daemon does not answer.
public let errSecNotAvailable: OSStatus = -25291
/// An access control that needs biometry or a prompt, which protfs cannot give.
public let errSecAuthFailed: OSStatus = -25293
/// An item with this service and account exists.
public let errSecDuplicateItem: OSStatus = -25299
/// No item matches the query.
public let errSecItemNotFound: OSStatus = -25300
/// The lock state forbids it now: the item's class key is not available.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// Data could not be decoded (never returned by protfs: items hold bytes as given).
public let errSecDecode: OSStatus = -26275
/// A required entitlement is missing (never returned by protfs: Linux has no entitlements).
public let errSecMissingEntitlement: OSStatus = -34018

/// Apple's message for a status, as `SecCopyErrorMessageString` gives it on iOS; nil for a
/// status protfs does not know. For `errSecParam`, followed by why this thread's last
/// `SecItem*` call got it (which key, what is wrong with it), in parentheses.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    guard status == errSecParam, let reason = ParamExplanation.last else { return applesMessage(status) as CFString? }
    return "One or more parameters passed to a function were not valid. (\(reason))" as CFString
}

private func applesMessage(_ status: OSStatus) -> String? {
    switch status {
    case errSecSuccess: "No error."
    case errSecUnimplemented: "Function or operation not implemented."
    case errSecParam: "One or more parameters passed to a function were not valid."
    case errSecAllocate: "Failed to allocate memory."
    case errSecUserCanceled: "User canceled the operation."
    case errSecNotAvailable: "No keychain is available. You may need to restart your computer."
    case errSecAuthFailed: "The user name or passphrase you entered is not correct."
    case errSecDuplicateItem: "The specified item already exists in the keychain."
    case errSecItemNotFound: "The specified item could not be found in the keychain."
    case errSecInteractionNotAllowed: "User interaction is not allowed."
    case errSecMissingEntitlement: "A required entitlement isn't present."
    case errSecDecode: "Unable to decode the provided data."
    default: nil
    }
}
