import Foundation

func save(_ data: Data, to url: URL, path: String) throws {
    try data.write(to: url, options: .completeFileProtection)
    try data.write(to: url, options: [.atomic, .completeFileProtectionUnlessOpen])
    try (data as NSData).write(toFile: path,
                               options: .completeFileProtectionUntilFirstUserAuthentication)
    try (url as NSURL).setResourceValue("NSFileProtectionComplete", forKey: .fileProtectionKey)
    let values = try url.resourceValues(forKeys: [.fileProtectionKey])
    _ = values
}

func classify(_ url: URL) throws {
    var url = url
    var values = URLResourceValues()
    values.fileProtection = .complete
    try url.setResourceValues(values)
}
