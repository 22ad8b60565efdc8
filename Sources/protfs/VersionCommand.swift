import CFuse
import CSodium
import ProtfsCommandLine
import ProtfsCore
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat

/// `protfs version`: the release, the on-disk format it writes, the libraries it runs on, and
/// the content cipher `init` chooses on this CPU.
enum VersionCommand {
    static let command = Command(name: "version", synopsis: "", run: { arguments in
        _ = try arguments.operands()
        let sodium = String(cString: sodium_version_string())
        let fuse = String(cString: fuse_pkgversion())
        print("protfs \(ProductVersion.release) (on-disk format: files and directories \(FileHeader.formatVersion),"
              + " keybag \(Keybag.currentVersion); libsodium \(sodium), libfuse \(fuse); new vaults here:"
              + " \(ContentAEAD.preferredOnThisCPU.name))")
    })
}
