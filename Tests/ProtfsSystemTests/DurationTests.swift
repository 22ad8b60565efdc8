import ProtfsSystem
import Testing

@Suite("Durations as files store them")
struct DurationTests {
    @Test("seconds stored as a JSON number come back exact when whole, and never trap when damaged")
    func fractionalSeconds() {
        #expect(Duration(fractionalSeconds: 1_000_010) == .seconds(1_000_010))
        #expect(Duration(fractionalSeconds: 1.5) == .milliseconds(1500))
        #expect(Duration.seconds(1_000_010).fractionalSeconds == 1_000_010)
        #expect(Duration(fractionalSeconds: .nan) == nil)
        #expect(Duration(fractionalSeconds: .infinity) == nil)
        #expect(Duration(fractionalSeconds: 1e30) == nil)
    }
}
