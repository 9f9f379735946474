import Glibc

// The monotonic clock, read by the render paths, the sequencer, the server and the loaders.

/// Monotonic clock in nanoseconds (`clock_gettime`, answered by the vDSO without a system call).
/// Thread: any; real-time safe. Inlinable: the render paths of other modules (the render
/// thread, JACK's process callback) read it inline, as they did in one module.
@inlinable @inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
}

/// Seconds on the monotonic clock (for load-time reports).
public func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
