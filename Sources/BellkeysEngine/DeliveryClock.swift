/// Turns the sequencer's delivery stamps into the monotonic clock, so that an event's arrival
/// is the moment the kernel delivered it, not the later moment the MIDI thread woke to read it.
///
/// The ALSA sequencer stamps every event delivered to bellkeys' port with the current time of
/// bellkeys' own queue (port timestamping). The queue's time and `CLOCK_MONOTONIC` both come from
/// the kernel's ktime, so their difference is constant but for one thing: each tick of the
/// queue timer sets the queue's time to the tick's due time, while the kernel measures from the
/// moment the tick ran, so the queue's time falls behind by that tick's lateness until the next
/// tick (under 1 ms at the sequencer's default 1 kHz on real hardware, several ms in an emulated
/// guest). The difference, monotonic minus queue, is therefore the true one plus a lateness that
/// is never negative, and its smallest value is the true one.
///
/// It is measured by reading the queue's time between two monotonic readings (`sample`); a sample
/// whose two readings are further apart than `maximumBracketNanoseconds` (the thread was
/// preempted in between) is ignored. The offset used is the smallest sample of the last one to
/// two seconds, as `FrameClock` keeps the earliest pair: it ignores late ticks, and follows any
/// slow drift between the queue timer and the clock.
///
/// Thread: the one MIDI (control) thread.
public struct DeliveryClock: Sendable {
    /// The widest bracket a sample may have: an ioctl takes a few microseconds.
    public static let maximumBracketNanoseconds: UInt64 = 200_000
    /// How long one window of samples lasts.
    public static let windowNanoseconds: UInt64 = 1_000_000_000
    /// The smallest offset of the current and of the previous window.
    private var current: Int64?
    private var previous: Int64?
    private var windowStart: UInt64 = 0

    /// Monotonic time minus queue time, in nanoseconds; nil before the first good sample.
    public var offset: Int64? {
        switch (current, previous) {
        case let (c?, p?): min(c, p)
        case let (c, p): c ?? p
        }
    }

    public init() {}

    /// Offers a measurement: the queue's time `queue`, read between the monotonic readings
    /// `before` and `after`. Returns whether it was kept.
    @discardableResult
    public mutating func sample(before: UInt64, queue: UInt64, after: UInt64) -> Bool {
        guard after >= before, after - before <= Self.maximumBracketNanoseconds else { return false }
        let middle = before + (after - before) / 2
        let sample = Int64(bitPattern: middle) &- Int64(bitPattern: queue)
        if current == nil || middle &- windowStart >= Self.windowNanoseconds {
            previous = current
            current = sample
            windowStart = middle
        } else if let c = current, sample < c {
            current = sample
        }
        return true
    }

    /// The monotonic time of a delivery stamped `queue` on the queue, given that it was read at
    /// `now`. Without a measurement, or for a stamp that would lie after `now`, it is `now`: an
    /// event never arrives after it was read.
    public func arrival(queue: UInt64, readAt now: UInt64) -> UInt64 {
        guard let offset else { return now }
        let stamped = Int64(bitPattern: queue) &+ offset
        return stamped < 0 ? now : min(now, UInt64(stamped))
    }
}
