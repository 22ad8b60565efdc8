import Glibc

/// A request to the kernel's CPU latency QoS (`/dev/cpu_dma_latency`). While it asks for
/// 0 us, idle CPUs poll instead of halting, so waking a thread on one of them needs no
/// interrupt and, in a virtual machine, no exit to the hypervisor and no wait for it to run
/// the halted virtual CPU again. The request lives as long as the descriptor: the kernel
/// drops it when the daemon closes it or dies.
public final class CPULatencyRequest: Sendable {
    /// The kernel's default target, which constrains nothing (2,000 s in microseconds).
    static let unconstrained: Int32 = 2_000_000_000

    private let descriptor: OwnedDescriptor

    /// Opens a request (it starts unconstrained). Only root may: the device is 0600.
    public init(device: String = "/dev/cpu_dma_latency") throws(Errno) {
        descriptor = try OwnedDescriptor.open(path: device, .writeOnly)
    }

    /// Asks idle CPUs to poll (`true`) or lets them sleep as the governor likes (`false`).
    public func keepCPUsPolling(_ polling: Bool) throws(Errno) {
        var microseconds = polling ? 0 : Self.unconstrained
        _ = try syscallRetrying { Glibc.write(descriptor.borrowed.rawValue, &microseconds, MemoryLayout<Int32>.size) }
    }
}
