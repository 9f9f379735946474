import CLinux
import Glibc

/// A descriptor another thread makes readable to wake the control thread's poll loop: the
/// render thread after an underrun or when its device failed, JACK's notification thread on a
/// graph change or the server's end. The loop sleeps without a timeout while nothing
/// sounds, so anything that must be seen without an input event comes through here.
/// Wraps an `eventfd` (non-blocking): `signal` adds 1; the loop reads the count back to 0.
/// Thread: `signal` any (one `write`, async-signal-safe; never on a path that runs every
/// period).
public final class Wakeup: @unchecked Sendable {
    public let descriptor: Int32

    public init() {
        descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(descriptor >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
    }

    deinit { close(descriptor) }

    /// Makes the descriptor readable. Never blocks.
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }
}
