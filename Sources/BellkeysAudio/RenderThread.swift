import BellkeysControl
import BellkeysEngine
import BellkeysSystem
import Glibc
import Synchronization

/// The dedicated thread that renders periods with a `LiveMixer` and writes them to a
/// `PCMOutput`, until asked to stop or the device fails.
///
/// Threads: `start`, `stop` and the counters belong to the control thread; `cycle` is what the
/// render thread runs, once per period.
public final class RenderThread: @unchecked Sendable {
    public let mixer: LiveMixer
    public let output: PCMOutput
    public let periodFrames: Int
    /// Receives a copy of every period written (`--record`). A constant: were it replaced while
    /// the thread runs, the thread's reference could be the last one and free the ring there.
    public let tap: AudioTap?
    /// Set by the control thread; the render thread ends after its current period.
    private let stopRequested = Atomic<Bool>(false)
    /// alsa-lib's error code once the device failed (the thread has ended), else 0.
    public let failureCode = Atomic<Int32>(0)
    /// Periods written so far.
    public let periodsWritten = Atomic<Int>(0)
    /// Set by the render thread as it ends.
    private let finished = Atomic<Bool>(false)
    private var thread: pthread_t?

    /// Signalled after each underrun and when the device fails, so the control thread sees
    /// them at once (it may be asleep with nothing sounding).
    public let wakeup: Wakeup?

    public init(mixer: LiveMixer, output: PCMOutput, tap: AudioTap? = nil, wakeup: Wakeup? = nil) {
        self.tap = tap
        self.wakeup = wakeup
        precondition(output.configuration.periodFrames <= mixer.maximumPeriodFrames)
        self.mixer = mixer
        self.output = output
        periodFrames = output.configuration.periodFrames
    }

    /// Renders one period and writes it. Thread: render. The rendering is checked real-time
    /// safe at compile time (`LiveMixer.renderPeriod`); the write blocks until the device has
    /// room, which is the point of this thread.
    public func cycle() -> PCMWriteResult {
        mixer.renderPeriod(frameCount: periodFrames, nanoseconds: monotonicNanoseconds())
        let result = output.write(mixer.output, frameCount: periodFrames, frameByteCount: mixer.frameByteCount)
        if result == .recovered { mixer.clock.restart() }
        // What the device took is what the recording gets.
        if let tap, result == .written || result == .recovered {
            tap.push(mixer.output, frameCount: periodFrames)
        }
        return result
    }

    private func run() {
        defer { finished.store(true, ordering: .releasing) }
        // After an underrun the buffer refills without blocking; on a CPU too slow for the
        // period that would keep a SCHED_FIFO thread running flat out and starve the rest of
        // the system. Sleeping one period after each recovery keeps the machine responsive.
        let periodMicroseconds = useconds_t(max(1_000, periodFrames * 1_000_000 / mixer.sampleRate))
        while !stopRequested.load(ordering: .relaxed) {
            switch cycle() {
            case .failed(let code):
                failureCode.store(code, ordering: .releasing)
                wakeup?.signal()
                return
            case .recovered:
                // Off the period's path: the device ran dry, and this thread sleeps anyway.
                wakeup?.signal()
                usleep(periodMicroseconds)
            case .written:
                break
            }
            periodsWritten.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Starts the thread, with SCHED_FIFO at `priority` when the system permits it.
    /// Thread: control.
    public func start(priority: Int32) -> RealTimeScheduling {
        var scheduling = RealTimeScheduling.realTime(priority: priority)
        let context = Unmanaged.passRetained(self).toOpaque()
        let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
            let thread = Unmanaged<RenderThread>.fromOpaque(context!).takeRetainedValue()
            thread.run()
            return nil
        }
        var handle = pthread_t()
        var status = startThread(
            &handle, context: context,
            configure: { attributes in
                pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
                pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
                var parameter = sched_param(sched_priority: priority)
                pthread_attr_setschedparam(&attributes, &parameter)
            }, body)
        if status != 0 {
            // Typically EPERM: no rtprio allowance. Run at normal priority instead.
            scheduling = .normal(errno: status)
            status = startThread(&handle, context: context, body)
            precondition(status == 0, "cannot create the render thread: \(String(cString: strerror(status)))")
        }
        thread = handle
        return scheduling
    }

    /// Asks the thread to end after its current period and waits for it. A write that does not
    /// return within 250 ms (a device that stopped moving) is cut short by dropping the
    /// device's buffer. Thread: control.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        if let thread {
            let deadline = monotonicNanoseconds() + 250_000_000
            while !finished.load(ordering: .acquiring), monotonicNanoseconds() < deadline { usleep(2_000) }
            if !finished.load(ordering: .acquiring) { output.stop() }
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    /// Whether the thread ended by itself (the device failed).
    public var failed: Bool { failureCode.load(ordering: .acquiring) != 0 }
}
