@testable import ProtfsCommandLine
import Testing

/// The progress line's numbers, without Foundation's formatters.
@Suite struct ProgressMeterTests {
    @Test func formats() {
        #expect(ProgressMeter.clock(59) == "0:59" && ProgressMeter.clock(61) == "1:01" && ProgressMeter.clock(3_725) == "1:02:05")
        #expect(ProgressMeter.size(512) == "512 B" && ProgressMeter.size(1536) == "1.5 KiB" && ProgressMeter.size(3 * 1_048_576) == "3.0 MiB")
        #expect(ProgressMeter.decimal(0.04) == "0.0" && ProgressMeter.decimal(12.25) == "12.3")
    }
}
