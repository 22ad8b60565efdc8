/// The time left of work that counts objects and bytes, learned from the work itself: the
/// time so far is fitted as `a·(objects done / objects in all) + b·(bytes done / bytes in
/// all)` by least squares with `a, b ≥ 0` over every sample, so whichever of the two the
/// work's time follows (a tree of small files: objects; a few large ones: bytes) decides,
/// and the time left is what the fit says the rest costs. Running sums only: a sample costs
/// no memory. No estimate until it has grounds for one: three samples, a second of work and
/// a hundredth of either count done.
struct ProgressEstimate {
    /// What the work comes to; nil where unknown (a re-class counts no bytes).
    let objects: UInt64?
    let bytes: UInt64?
    private var sums = Sums()

    private struct Sums {
        var count = 0
        var oo = 0.0, ob = 0.0, bb = 0.0, os = 0.0, bs = 0.0, ss = 0.0
    }

    init(objects: UInt64?, bytes: UInt64?) {
        self.objects = objects.flatMap { $0 > 0 ? $0 : nil }
        self.bytes = bytes.flatMap { $0 > 0 ? $0 : nil }
    }

    var isKnown: Bool { objects != nil || bytes != nil }

    /// Fractions done of each count (0 for an unknown total: it explains nothing).
    private func fractions(objects done: UInt64, bytes doneBytes: UInt64) -> (Double, Double) {
        (objects.map { min(Double(done) / Double($0), 1) } ?? 0, bytes.map { min(Double(doneBytes) / Double($0), 1) } ?? 0)
    }

    mutating func add(objects done: UInt64, bytes doneBytes: UInt64, seconds: Double) {
        let (o, b) = fractions(objects: done, bytes: doneBytes)
        sums.count += 1
        sums.oo += o * o; sums.ob += o * b; sums.bb += b * b
        sums.os += o * seconds; sums.bs += b * seconds; sums.ss += seconds * seconds
    }

    /// Seconds left after `done`/`doneBytes` at `seconds`, or nil while there are no grounds.
    func secondsLeft(objects done: UInt64, bytes doneBytes: UInt64, seconds: Double) -> UInt64? {
        let (o, b) = fractions(objects: done, bytes: doneBytes)
        guard isKnown, sums.count >= 3, seconds >= 1, max(o, b) >= 0.01, let (a, c) = fit() else { return nil }
        let left = a * (1 - o) + c * (1 - b)
        return left.isFinite && left >= 0 ? UInt64(left.rounded(.up)) : nil
    }

    /// The non-negative least-squares `(a, b)`: the two-term solution when both are
    /// non-negative, else the better of the one-term fits.
    private func fit() -> (Double, Double)? {
        let determinant = sums.oo * sums.bb - sums.ob * sums.ob
        if determinant > 1e-12 * max(sums.oo * sums.bb, 1e-300) {
            let a = (sums.os * sums.bb - sums.bs * sums.ob) / determinant
            let b = (sums.bs * sums.oo - sums.os * sums.ob) / determinant
            if a >= 0 && b >= 0 { return (a, b) }
        }
        // One term: a = Σos/Σoo leaves Σss - a·Σos unexplained; the smaller residual wins.
        let byObjects = sums.oo > 0 ? sums.os / sums.oo : nil
        let byBytes = sums.bb > 0 ? sums.bs / sums.bb : nil
        switch (byObjects, byBytes) {
        case let (a?, b?): return sums.ss - a * sums.os <= sums.ss - b * sums.bs ? (a, 0) : (0, b)
        case let (a?, nil): return (a, 0)
        case let (nil, b?): return (0, b)
        case (nil, nil): return nil
        }
    }
}
