import ProtfsFormat
import ProtfsSystem
import Synchronization

/// Makes the objects a restore's replay reads, in the order read, on a thread of its own:
/// the replay parses records and re-seals file headers while this thread waits on the
/// kernel creating files (one thread for both spent a source tree's restore in turn on
/// each). Steps go over in batches of `batchSteps` steps or `batchBytes` bytes of data (a
/// handoff per step woke the other thread tens of thousands of times, which cost more than
/// it saved); at most `batchesAhead` batches wait, so memory stays constant. The first
/// failure stops the making; it is reported by a later `add` or by `finish`.
final class RestoreMaker: Sendable {
    static let batchSteps = 256
    static let batchBytes = 1 << 20
    static let batchesAhead = 4
    /// Writes are joined up to this size only (each join copies what it joins).
    static let joinedWriteBytes = 64 << 10

    enum Step: Sendable {
        case directory(String, BackupAttributes, [(String, [UInt8])])
        case beginFile(String, mode: UInt32, [(String, [UInt8])])
        case write([UInt8], at: UInt64)
        case endFile(String, size: UInt64, written: UInt64, BackupAttributes)
        case symlink(String, target: String, BackupAttributes)
        case node(String, BackupAttributes, device: UInt64)
        case hardLink(String, to: String)
    }

    /// The new vault's keyring, which file headers are re-sealed for.
    let keyring: ClassKeyring
    private let batches = BoundedHandoff<[Step]>(capacity: batchesAhead)
    /// The batch being filled, and its bytes of data; only the replay's thread touches it.
    private let filling = Mutex<(steps: [Step], bytes: Int)>(([], 0))
    private let failure = Mutex<BackupError?>(nil)
    private let making = ThreadGroup()

    /// Starts making into `target`, which only this thread uses until `finish` or `stop`
    /// returns.
    init(into target: RestoreTarget) throws(BackupError) {
        keyring = target.keyring
        do { try making.start { [self] in make(into: target) } } catch {
            throw .system(operation: "start a thread for", path: "the restore", errno: error)
        }
    }

    private func make(into target: RestoreTarget) {
        while let batch = batches.take() {
            for step in batch {
                guard failure.withLock({ $0 == nil }) else { break }
                do throws(BackupError) { try make(step, in: target) } catch { failure.withLock { $0 = error } }
            }
        }
    }

    /// Queues a step; throws the failure of an earlier one, if any.
    func add(_ step: Step) throws(BackupError) {
        let full: [Step]? = filling.withLock { filling in
            if case let .write(bytes, offset) = step {
                filling.bytes += bytes.count
                // A small write that goes on where the last one ended joins it: a small
                // file's header and data in one pwrite.
                if case let .write(previous, start)? = filling.steps.last, start + UInt64(previous.count) == offset,
                   previous.count + bytes.count <= Self.joinedWriteBytes {
                    filling.steps[filling.steps.count - 1] = .write(previous + bytes, at: start)
                } else {
                    filling.steps.append(step)
                }
            } else {
                filling.steps.append(step)
            }
            guard filling.steps.count >= Self.batchSteps || filling.bytes >= Self.batchBytes else { return nil }
            defer { filling = ([], 0) }
            return filling.steps
        }
        if let full {
            try check()
            batches.put(full)
        }
    }

    /// Waits until every queued step is made; throws the first failure.
    func finish() throws(BackupError) {
        batches.put(filling.withLock { filling in
            defer { filling = ([], 0) }
            return filling.steps
        })
        stop()
        try check()
    }

    /// Waits for the thread, making what is queued unless something failed.
    func stop() {
        batches.finish()
        making.joinAll()
    }

    private func check() throws(BackupError) {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private func make(_ step: Step, in target: RestoreTarget) throws(BackupError) {
        switch step {
        case let .directory(path, attributes, xattrs): try target.makeDirectory(path, attributes, xattrs)
        case let .beginFile(path, mode, xattrs): try target.beginFile(path, mode: mode, xattrs)
        case let .write(bytes, offset): try target.write(bytes, at: offset)
        case let .endFile(path, size, written, attributes): try target.endFile(path, size: size, written: written, attributes)
        case let .symlink(path, link, attributes): try target.makeSymlink(path, target: link, attributes)
        case let .node(path, attributes, device): try target.makeNode(path, attributes, device: device)
        case let .hardLink(path, first): try target.makeHardLink(path, to: first)
        }
    }
}
