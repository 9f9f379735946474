import CLinux
import Glibc

/// Delivers SIGINT, SIGTERM and SIGHUP through a descriptor to poll, so that no work happens
/// in a signal handler. The signals are blocked in the calling thread and in every thread it
/// starts afterwards (the render thread never sees them). Thread: control. Wraps `signalfd`.
public final class SignalListener {
    public let descriptor: Int32

    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        descriptor = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        precondition(descriptor >= 0, "signalfd failed: \(String(cString: strerror(errno)))")
    }

    deinit { close(descriptor) }

    /// The next pending signal's number, or nil.
    public func next() -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        return read(descriptor, &info, size) == size ? Int32(info.ssi_signo) : nil
    }
}
