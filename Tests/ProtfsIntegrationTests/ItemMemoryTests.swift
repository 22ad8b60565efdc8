import Foundation
import Glibc
import Testing

/// Issue 38: one user took the root daemon down through item listings. Attribute bytes had no
/// bound (about 90 KB an item), a listing built its whole reply before comparing it with the
/// reply bound and dropped an oversized one in silence, and four listings at once got the
/// daemon OOM-killed. Here as a second real account against a root mount.
@Suite("Item memory bounds", .serialized)
struct ItemMemoryTests {
    /// The most the daemon's peak resident size may reach: a few replies of one owner's
    /// largest listing (`ItemLimits`: 4 MiB of attributes, at most 24 MiB of JSON) at once.
    static let peakKilobytes = 256 * 1024

    @Test("another user's large-attribute items are bounded, and concurrent listings are answered or refused with a reason")
    func largeAttributeListingsAreBounded() throws {
        let attacker = try TestUser.named("protfs-bob")
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script("memory/item-memory-attack.py", [TestVault.protfsctl, vault.mountpoint, String(attacker.uid),
                                                                    String(attacker.gid), String(vault.daemonPID), "120", "6"],
                                          timeout: 600)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let added = lines.first { $0.hasPrefix("add ") } ?? ""
        #expect(added.hasPrefix("add refused after") && added.contains("attributes would total"), "\(added)")
        let listings = lines.filter { $0.hasPrefix("listing ") }
        #expect(listings.count == 6, "\(result.stdout)")
        for listing in listings {
            let answered = listing.hasPrefix("listing answered") && !listing.hasSuffix(": 0 items")
            let refused = listing.hasPrefix("listing refused (1)") && listing.contains("busy")
            #expect(answered || refused, "\(listing)")
        }
        let peak = lines.first { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) }
        #expect(peak.map { $0 < Self.peakKilobytes } == true, "the daemon's peak resident size: \(peak ?? -1) kB")
        #expect(TestVault.isMounted(vault.mountpoint) && vault.shell("ls > /dev/null").succeeded, "\(vault.daemonOutput)")
    }
}
