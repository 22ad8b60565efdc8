import ProtfsTestSupport
import Foundation

/// How much fuzzing a run does: `PROTFS_FUZZ_ITERATIONS` mutated inputs per decoder (the
/// default keeps the whole fuzz suite to a few seconds in CI) from `PROTFS_FUZZ_SEED`
/// (fixed by default, so a failure replays; every failure message names seed and iteration).
enum FuzzBudget {
    static let iterations = environmentValue("PROTFS_FUZZ_ITERATIONS").flatMap { Int($0) } ?? 2000
    static let seed = environmentValue("PROTFS_FUZZ_SEED").flatMap { UInt64($0) } ?? 0x5EED_DEC0_DE25

    private static func environmentValue(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }
}

/// Seeded mutations of valid encodings, of the kinds that break hand-written decoders: bit
/// flips, boundary bytes, truncations, extensions, splices with another sample, repeated
/// and dropped ranges, and integer fields (either byte order) set to their extremes.
struct ByteMutator {
    private var generator: SeededGenerator
    private let samples: [[UInt8]]

    /// Values a length or count field is most likely to be mishandled at, as 64-bit patterns
    /// cut to the field's width.
    private static let extremes: [UInt64] = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF,
                                             0x1_0000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF,
                                             0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, .max]

    init(samples: [[UInt8]], seed: UInt64) {
        precondition(!samples.isEmpty)
        self.samples = samples
        generator = SeededGenerator(seed: seed)
    }

    /// A sample with one to four mutations.
    mutating func next() -> [UInt8] {
        var bytes = samples[Int.random(in: 0..<samples.count, using: &generator)]
        for _ in 0..<Int.random(in: 1...4, using: &generator) { mutate(&bytes) }
        return bytes
    }

    /// A random index into `bytes`, or nil when there is none.
    private mutating func index(in bytes: [UInt8]) -> Int? {
        bytes.isEmpty ? nil : Int.random(in: 0..<bytes.count, using: &generator)
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        switch Int.random(in: 0..<9, using: &generator) {
        case 0:
            guard let i = index(in: bytes) else { return }
            bytes[i] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
        case 1:
            guard let i = index(in: bytes) else { return }
            bytes[i] = [0x00, 0x01, 0x2F, 0x2E, 0x7F, 0x80, 0xFE, 0xFF].randomElement(using: &generator)!
        case 2:
            bytes.removeLast(Int.random(in: 0...bytes.count, using: &generator))
        case 3:
            let count = Int.random(in: 1...64, using: &generator)
            let filler: UInt8? = Bool.random(using: &generator) ? 0 : nil
            bytes += (0..<count).map { _ in filler ?? UInt8.random(in: 0...255, using: &generator) }
        case 4:
            // Splice: a prefix of this input, then the rest of another sample from a random point.
            let other = samples[Int.random(in: 0..<samples.count, using: &generator)]
            let cut = Int.random(in: 0...bytes.count, using: &generator)
            let from = Int.random(in: 0...other.count, using: &generator)
            bytes = Array(bytes[..<cut]) + other[from...]
        case 5:
            guard let i = index(in: bytes) else { return }
            let length = Int.random(in: 1...min(32, bytes.count - i), using: &generator)
            bytes.insert(contentsOf: bytes[i..<(i + length)], at: i)
        case 6:
            guard let i = index(in: bytes) else { return }
            bytes.removeSubrange(i..<(i + Int.random(in: 1...min(32, bytes.count - i), using: &generator)))
        case 7:
            guard let i = index(in: bytes) else { return }
            bytes.insert(UInt8.random(in: 0...255, using: &generator), at: i)
        default:
            setIntegerField(in: &bytes)
        }
    }

    private mutating func setIntegerField(in bytes: inout [UInt8]) {
        let width = [1, 2, 4, 8].randomElement(using: &generator)!
        guard bytes.count >= width else { return }
        let offset = Int.random(in: 0...(bytes.count - width), using: &generator)
        let value = Self.extremes.randomElement(using: &generator)!
        let bigEndian = Bool.random(using: &generator)
        for k in 0..<width {
            let shift = UInt64(8 * (bigEndian ? width - 1 - k : k))
            bytes[offset + k] = UInt8(truncatingIfNeeded: value >> shift)
        }
    }
}

/// Runs `check` on `FuzzBudget.iterations` mutations of `samples`; `check` returns the
/// property a decoder broke, or nil. Every other input first goes through `reseal` when one
/// is given (a MAC recomputed over the mutated bytes). Stops at the first few broken
/// properties, each reported with what replays it. A crash ends the test process, which is
/// the point: none may happen.
func fuzz(_ name: String, samples: [[UInt8]], reseal: (([UInt8]) -> [UInt8])? = nil,
          _ check: ([UInt8]) -> String?) -> [String] {
    // One stream per decoder, so adding a decoder does not change the inputs of the others.
    let seed = FuzzBudget.seed ^ name.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    var mutator = ByteMutator(samples: samples, seed: seed)
    var broken: [String] = []
    for iteration in 0..<FuzzBudget.iterations where broken.count < 5 {
        let mutated = mutator.next()
        let input = iteration % 2 == 1 ? reseal?(mutated) ?? mutated : mutated
        if let problem = check(input) {
            broken.append("\(name), PROTFS_FUZZ_SEED=\(FuzzBudget.seed) iteration \(iteration), input \(hex(input)): \(problem)")
        }
    }
    return broken
}
