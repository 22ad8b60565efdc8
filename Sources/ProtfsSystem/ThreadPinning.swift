import CProtfsSys

/// Threads bound to one CPU (the io_uring transport's, each on its queue's CPU), and the
/// pool threads they happen to create: a new thread inherits its creator's CPUs, and
/// libdispatch creates its workers from whichever thread first needs them, so without
/// `undoInherited` the crypto meant for every core ran on one.
public enum ThreadPinning {
    /// Binds the calling thread to `cpu`; false if the kernel refused (a CPU outside the
    /// process's set: the thread then runs anywhere).
    @discardableResult
    public static func pin(toCPU cpu: Int) -> Bool { protfs_pin_thread_to_cpu(Int32(cpu)) == 0 }

    /// For work that runs on pool threads: a thread created by a pinned one gets every CPU
    /// of the process back (a thread that pinned itself keeps its CPU). Cheap after the
    /// first call on a thread.
    public static func undoInherited() { protfs_undo_inherited_pinning() }
}
