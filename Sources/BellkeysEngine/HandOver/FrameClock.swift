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
            frame.relaxedStore(f)
            nanoseconds.relaxedStore(t)
            offset.relaxedStore(o)
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
        if frameValue.relaxedLoad() < 0
            || nanoseconds &- windowStart.relaxedLoad() >= windowNanoseconds
        {
            previous.set(
                frame: current.frame.relaxedLoad(),
                nanoseconds: current.nanoseconds.relaxedLoad(),
                offset: current.offset.relaxedLoad())
            current.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
            windowStart.relaxedStore(nanoseconds)
        } else if offset <= current.offset.relaxedLoad() {
            current.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
        }
        noticeSlip(frame: frame, nanoseconds: nanoseconds, offset: offset)
        var anchorFrame = current.frame.relaxedLoad()
        var anchorTime = current.nanoseconds.relaxedLoad()
        if previous.offset.relaxedLoad() < current.offset.relaxedLoad() {
            anchorFrame = previous.frame.relaxedLoad()
            anchorTime = previous.nanoseconds.relaxedLoad()
        }
        let s = sequence.relaxedLoad()
        sequence.relaxedStore(s &+ 1)
        releasingFence()
        frameValue.relaxedStore(anchorFrame)
        nanosecondsValue.relaxedStore(anchorTime)
        sequence.releasingStore(s &+ 2)
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
        let count = blockCount.relaxedLoad()
        if count == 0 || offset < block.offset.relaxedLoad() {
            block.set(frame: frame, nanoseconds: nanoseconds, offset: offset)
        }
        if count == 0 { blockStart.relaxedStore(nanoseconds) }
        blockCount.relaxedStore(count + 1)
        guard count + 1 >= Self.slipBlockPairs,
            nanoseconds &- blockStart.relaxedLoad() >= Self.slipBlockNanoseconds
        else { return }
        blockCount.relaxedStore(0)
        let line = min(current.offset.relaxedLoad(), previous.offset.relaxedLoad())
        let earliest = block.offset.relaxedLoad()
        guard earliest &- line > Self.slipNanoseconds else { return }
        current.set(
            frame: block.frame.relaxedLoad(), nanoseconds: block.nanoseconds.relaxedLoad(),
            offset: earliest)
        previous.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        windowStart.relaxedStore(nanoseconds)
        slips.relaxedAdd(1)
    }

    /// Forgets the line after the device's clock jumped (an underrun restarted it); the next
    /// `publish` starts it again. Thread: render. Real-time safe.
    @_noLocks
    public func restart() {
        current.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        previous.set(frame: -1, nanoseconds: 0, offset: Int64.max)
        windowStart.relaxedStore(0)
        blockCount.relaxedStore(0)
    }

    /// A point of the device's clock line (frame, time), or nil before the first `publish`.
    /// Thread: any.
    public func read() -> (frame: Int64, nanoseconds: UInt64)? {
        while true {
            let before = sequence.acquiringLoad()
            if before & 1 != 0 { continue }
            let frame = frameValue.relaxedLoad()
            let nanoseconds = nanosecondsValue.relaxedLoad()
            acquiringFence()
            if sequence.relaxedLoad() == before {
                return frame < 0 ? nil : (frame, nanoseconds)
            }
        }
    }
}
