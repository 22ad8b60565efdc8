import Glibc
import ProtfsSystem

/// The progress of long work (`protfs backup`, `fsck`, `restore`, `protfsctl class set -R`)
/// on standard error, where it never mixes with a command's output: a line redrawn at most
/// four times a second (objects, bytes, rate, time left once `ProgressEstimate` has one) on a
/// terminal or with `--progress`, nothing on a pipe, or with `--json` one JSON object a line
/// at the same pace and a last one with `"done":true` (docs/OPERATIONS.md).
public final class ProgressMeter {
    /// The flags of every command that shows progress.
    public static let flags: Set = ["--progress", "--json"]

    public enum Style: Sendable, Equatable {
        case none, line, json

        /// `--json`, else `--progress` or a terminal on standard error, else nothing.
        public init(_ arguments: ParsedArguments) {
            if arguments.isSet("--json") {
                self = .json
            } else if arguments.isSet("--progress") || isatty(STDERR_FILENO) == 1 {
                self = .line
            } else {
                self = .none
            }
        }
    }

    /// What the work will come to, as far as known beforehand (nil: not known).
    public struct Total: Sendable, Equatable {
        public let objects: UInt64?
        public let bytes: UInt64?

        public init(objects: UInt64? = nil, bytes: UInt64? = nil) {
            self.objects = objects
            self.bytes = bytes
        }

        /// A tree's regular files and directories and their bytes.
        public init(_ tally: TreeTally) { self.init(objects: tally.objects, bytes: tally.bytes) }
    }

    private static let interval: UInt64 = 250_000_000
    private let command: String
    public let style: Style
    private let total: Total?
    private var estimate: ProgressEstimate
    private let started = MonotonicClock.nanoseconds()
    private var lastShown: UInt64 = 0
    private var objects: UInt64 = 0
    private var bytes: UInt64 = 0

    public init(command: String, style: Style, total: Total? = nil) {
        self.command = command
        self.style = style
        self.total = total
        estimate = ProgressEstimate(objects: total?.objects, bytes: total?.bytes)
    }

    public var isShown: Bool { style != .none }

    /// The work so far; shown when a quarter of a second has passed since the last time.
    public func update(objects: UInt64, bytes: UInt64) {
        guard style != .none else { return }
        (self.objects, self.bytes) = (objects, bytes)
        let now = MonotonicClock.nanoseconds()
        guard lastShown == 0 || now - lastShown >= Self.interval else { return }
        lastShown = now
        show(objects: objects, bytes: bytes, at: now, done: false)
    }

    /// The work's end, with its final counts (those of the last update when not given): the
    /// last record, or the line with its newline.
    public func finish(objects: UInt64? = nil, bytes: UInt64? = nil) {
        guard style != .none else { return }
        show(objects: objects ?? self.objects, bytes: bytes ?? self.bytes, at: MonotonicClock.nanoseconds(), done: true)
    }

    private func show(objects: UInt64, bytes: UInt64, at now: UInt64, done: Bool) {
        let elapsed = Double(now - started) / 1e9
        let rate = elapsed > 0 ? Double(bytes) / elapsed : 0
        estimate.add(objects: objects, bytes: bytes, seconds: elapsed)
        let secondsLeft = done ? 0 : estimate.secondsLeft(objects: objects, bytes: bytes, seconds: elapsed)
        func number(_ value: UInt64?) -> String { value.map { String($0) } ?? "null" }
        switch style {
        case .none:
            return
        case .json:
            writeError("{\"command\":\"\(command)\",\"objects\":\(objects),\"bytes\":\(bytes),"
                       + "\"totalObjects\":\(number(total?.objects)),\"totalBytes\":\(number(total?.bytes)),"
                       + "\"elapsedSeconds\":\(Self.decimal(elapsed)),\"bytesPerSecond\":\(UInt64(rate)),"
                       + "\"secondsLeft\":\(number(secondsLeft)),\"done\":\(done)}\n")
        case .line:
            // Work that reads no data (a re-class) is paced in objects, not in bytes.
            let pace = bytes == 0 && total?.bytes == nil
                ? "\(UInt64(elapsed > 0 ? Double(objects) / elapsed : 0)) objects/s"
                : "\(Self.size(Double(bytes))), \(Self.size(rate))/s"
            var text = "\(command): \(objects) objects, \(pace)"
            if let secondsLeft, !done { text += ", \(Self.clock(secondsLeft)) left" }
            // Spaces clear what a longer line before left behind.
            writeError("\r" + text + "      " + (done ? "\n" : ""))
        }
    }

    static func size(_ bytes: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = bytes, unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : "\(decimal(value)) \(units[unit])"
    }

    /// One decimal place, without Foundation's formatters.
    static func decimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// `M:SS`, or `H:MM:SS` from an hour on.
    static func clock(_ seconds: UInt64) -> String {
        func two(_ n: UInt64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let (hours, minutes, rest) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}
