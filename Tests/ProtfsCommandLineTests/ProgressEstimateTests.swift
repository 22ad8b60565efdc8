@testable import ProtfsCommandLine
import Testing

/// The time left learned from what the work counts (docs/OPERATIONS.md): work whose time
/// follows its objects, work whose time follows its bytes, and no estimate without grounds.
@Suite struct ProgressEstimateTests {
    /// Feeds samples every quarter second of a job of `seconds` where `progress(t)` is what
    /// is done at `t`; returns the estimate at `at`.
    private func estimate(total: (UInt64, UInt64), seconds: Double, at: Double,
                          _ progress: (Double) -> (UInt64, UInt64)) -> UInt64? {
        var estimate = ProgressEstimate(objects: total.0, bytes: total.1)
        var t = 0.25
        while t <= at {
            let (o, b) = progress(t)
            estimate.add(objects: o, bytes: b, seconds: t)
            t += 0.25
        }
        let (o, b) = progress(at)
        return estimate.secondsLeft(objects: o, bytes: b, seconds: at)
    }

    @Test("a tree of small files after one large one: the objects decide")
    func objectsDominate() throws {
        // 10,000 objects over 20 s; one 1 GiB file, done in the first second, is nearly all the bytes.
        let left = try #require(estimate(total: (10_000, 1 << 30), seconds: 20, at: 10) { t in
            (UInt64(t / 20 * 10_000), t >= 1 ? 1 << 30 : UInt64(t * Double(1 << 30)))
        })
        #expect((8...12).contains(left), "\(left) s left, 10 s expected")
    }

    @Test("directories first, then the bytes of a few large files: the bytes decide")
    func bytesDominate() throws {
        // 100 directories in the first half second, then 4 GiB at a steady pace to 30 s.
        let left = try #require(estimate(total: (104, 4 << 30), seconds: 30, at: 6) { t in
            (min(UInt64(t * 200), 100) + (t > 15 ? 2 : 0), t < 0.5 ? 0 : UInt64((t - 0.5) / 29.5 * Double(4 << 30)))
        })
        #expect((20...28).contains(left), "\(left) s left, 24 s expected")
    }

    @Test("no estimate before a second, three samples, a hundredth done, or a known total")
    func noGroundsNoEstimate() {
        #expect(estimate(total: (100, 100), seconds: 10, at: 0.75) { t in (UInt64(t * 10), UInt64(t * 10)) } == nil)
        #expect(estimate(total: (1_000_000, 1 << 40), seconds: 10, at: 5) { _ in (1, 1) } == nil)
        var unknown = ProgressEstimate(objects: nil, bytes: 0)
        for t in 1...8 { unknown.add(objects: UInt64(t), bytes: 0, seconds: Double(t)) }
        #expect(unknown.secondsLeft(objects: 8, bytes: 0, seconds: 8) == nil)
    }
}
