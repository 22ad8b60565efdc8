import Glibc
import ProtfsCore
import Testing

/// The kernel's rule for what a write by a caller without CAP_FSETID leaves of a mode.
@Suite struct SetIDBitsTests {
    @Test("set-user-ID always goes; set-group-ID goes with group execution or from a caller not in the group; the rest stays",
          arguments: [
              (mode_t(0o6775), true, mode_t(0o0775)),
              (0o4755, true, 0o0755),
              (0o4644, true, 0o0644),
              (0o2775, true, 0o0775),
              (0o2765, true, 0o2765),
              (0o2765, false, 0o0765),
              (0o6765, true, 0o2765),
              (0o6666, false, 0o0666),
              (0o7777, true, 0o1777),
              (0o1777, false, 0o1777),
              (0o0644, false, 0o0644),
          ])
    func modeAfterWrite(mode: mode_t, callerInGroup: Bool, kept: mode_t) {
        #expect(VaultFileSystem.modeAfterUnprivilegedWrite(mode, callerInGroup: callerInGroup) == kept)
    }
}
