import Synchronization

/// Ties output frames to wall-clock time, so that live events start at a constant latency.
///
/// Before rendering each period the render thread publishes the period's first frame and the
/// time it starts rendering it (`publish`). With blocking writes, the thread wakes when the
/// device has consumed a period, so each (frame, time) pair lies on the device's clock line or
/// late (a slow wake-up, or a driver that wakes in bursts, like snd-aloop on its 4 ms tick).
/// The clock keeps the earliest pair (the one with the smallest time − frame / rate) seen over
/// the last one to two seconds as its anchor: the best estimate of the device's line, immune to
/// late wake-ups, and recent enough that drift between the sound card's and the system's
/// clocks stays far below a millisecond.
///
/// The control thread turns an arrival time into a frame one period after the frame the line
/// says the render thread would render at that moment (`FrameClock.Stamper`, in
/// BellkeysControl). An event then plays a constant buffer's time after it arrived, whatever
/// its phase within the period, if the control thread hands it over before the render thread
/// begins that period. An event that arrives near a period's end leaves it almost no time: when
/// it misses, the engine plays it at the next period's start and counts it late (in the VM,
/// about one note in twenty, up to a period late: docs/testing.md, what an onset's latency is
/// made of).
/// (Quantising to the period instead, as FluidSynth does, spreads onsets over a whole period.)
///
/// A sequence lock keeps the pair consistent: the writer never waits; a reader retries while
/// a write is under way. Non-copyable, so its owner reaches it without reference counting.
/// Thread: `publish`, `restart` render only; `read` any.
public struct FrameClock: ~Copyable, Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let frameValue = Atomic<Int64>(-1)
    private let nanosecondsValue = Atomic<UInt64>(0)
    private let nanosecondsPerFrame: Double
    /// Render-thread state: the earliest pair of the current and of the previous window.
    private let windowNanoseconds: UInt64 = 1_000_000_000
    private let windowStart = Atomic<UInt64>(0)
    private let current = Anchor()
    private let previous = Anchor()
    /// Render-thread state for noticing that the device's clock slipped: the earliest pair of
    /// the current block of at least `slipBlockNanoseconds`.
    private let block = Anchor()
    private let blockStart = Atomic<UInt64>(0)
    private let blockCount = Atomic<Int>(0)
    /// A block whose every pair lies this much later than the line says the device slipped.
    public static let slipNanoseconds: Int64 = 2_000_000
    /// A block lasts at least this long and holds at least `slipBlockPairs` pairs.
    public static let slipBlockNanoseconds: UInt64 = 100_000_000
    public static let slipBlockPairs = 8
    /// Times the line was moved because the device's clock slipped.
    public let slips = Atomic<Int>(0)

    /// Storage for one (frame, time, offset) candidate, render thread only.
    private struct Anchor: ~Copyable, Sendable {
        let frame = Atomic<Int64>(-1)
        let nanoseconds = Atomic<UInt64>(0)
        let offset = Atomic<Int64>(Int64.max)

        @_noLocks
        func set(frame f: Int64, nanoseconds t: UInt64, offset o: Int64) {
            frame.store(f, ordering: .relaxed)
            nanoseconds.store(t, ordering: .relaxed)
            offset.store(o, ordering: .relaxed)
        }
    }

    public init(sampleRate: Int) {
        nanosecondsPerFrame = 1e9 / Double(sampleRate)
    }

    /// Records that rendering of `frame` starts at `nanoseconds` (monotonic clock).
    /// Thread: render. Real-time safe.
    @_noLocks
    public func publish(frame: Int64, nanoseconds: UInt64) {
        let offset = Int64(bitPattern: nanoseconds) &- Int64(Double(frame) * nanosecondsPerFrame)
        if frameValue.load(ordering: .relaxed) < 0
            || nanoseconds &- windowStart.load(ordering: .relaxed) >= windowNanoseconds
        {
            previous.set(
                frame: current.frame.load(ordering: .relaxed),
                nanoseconds: current.nanoseconds.load(ordering: .relaxed),
                offset: current.offset.load(ordering: .relaxed))
            current.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
            windowStart.store(nanoseconds, ordering: .relaxed)
        } else if offset <= current.offset.load(ordering: .relaxed) {
            current.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
        }
        noticeSlip(frame: frame, nanoseconds: nanoseconds, offset: offset)
        var anchorFrame = current.frame.load(ordering: .relaxed)
        var anchorTime = current.nanoseconds.load(ordering: .relaxed)
        if previous.offset.load(ordering: .relaxed) < current.offset.load(ordering: .relaxed) {
            anchorFrame = previous.frame.load(ordering: .relaxed)
            anchorTime = previous.nanoseconds.load(ordering: .relaxed)
        }
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        frameValue.store(anchorFrame, ordering: .relaxed)
        nanosecondsValue.store(anchorTime, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// The line keeps the earliest pair for one to two seconds, so that late wake-ups never move
    /// it. A device whose clock really moved later (a USB card that resynchronised, a driver
    /// that skipped a buffer without reporting an underrun, as snd-aloop does in an emulated
    /// guest) would then place every event late for up to two seconds. When every pair of a
    /// block of at least 0.1 s and 8 periods lies more than 2 ms later than the line, the device
    /// slipped: late wake-ups are sporadic, and a single on-time wake-up in the block keeps the
    /// line. The line then starts again from the block's earliest pair. Thread: render.
    @_noLocks
    private func noticeSlip(frame: Int64, nanoseconds: UInt64, offset: Int64) {
        let count = blockCount.load(ordering: .relaxed)
        if count == 0 || offset < block.offset.load(ordering: .relaxed) {
            block.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
        }
        if count == 0 { blockStart.store(nanoseconds, ordering: .relaxed) }
        blockCount.store(count + 1, ordering: .relaxed)
        guard count + 1 >= Self.slipBlockPairs,
            nanoseconds &- blockStart.load(ordering: .relaxed) >= Self.slipBlockNanoseconds
        else { return }
        blockCount.store(0, ordering: .relaxed)
        let line = min(current.offset.load(ordering: .relaxed), previous.offset.load(ordering: .relaxed))
        let earliest = block.offset.load(ordering: .relaxed)
        guard earliest &- line > Self.slipNanoseconds else { return }
        current.set(
            frame: block.frame.load(ordering: .relaxed), nanoseconds: block.nanoseconds.load(ordering: .relaxed),
            offset: earliest)
        previous.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        windowStart.store(nanoseconds, ordering: .relaxed)
        slips.wrappingAdd(1, ordering: .relaxed)
    }

    /// Forgets the line after the device's clock jumped (an underrun restarted it); the next
    /// `publish` starts it again. Thread: render. Real-time safe.
    @_noLocks
    public func restart() {
        current.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        previous.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        windowStart.store(0, ordering: .relaxed)
        blockCount.store(0, ordering: .relaxed)
    }

    /// A point of the device's clock line (frame, time), or nil before the first `publish`.
    /// Thread: any.
    public func read() -> (frame: Int64, nanoseconds: UInt64)? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 != 0 { continue }
            let frame = frameValue.load(ordering: .relaxed)
            let nanoseconds = nanosecondsValue.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before {
                return frame < 0 ? nil : (frame, nanoseconds)
            }
        }
    }
}
