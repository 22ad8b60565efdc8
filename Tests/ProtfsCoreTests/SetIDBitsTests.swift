import Glibc
import ProtfsCore
import Testing

/// The kernel's rule for what a write by a caller without CAP_FSETID leaves of a mode.
@Suite struct SetIDBitsTests {
    @Test("set-user-ID always goes; set-group-ID goes only with group execution; the rest stays",
          arguments: [
              (mode_t(0o6775), mode_t(0o0775)),
              (0o4755, 0o0755),
              (0o4644, 0o0644),
              (0o2775, 0o0775),
              (0o2765, 0o2765),
              (0o6765, 0o2765),
              (0o7777, 0o1777),
              (0o1777, 0o1777),
              (0o0644, 0o0644),
          ])
    func modeAfterWrite(mode: mode_t, kept: mode_t) {
        #expect(VaultFileSystem.modeAfterUnprivilegedWrite(mode) == kept)
    }
}
