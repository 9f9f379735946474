/// Turns the sequencer's delivery stamps into the monotonic clock, so that an event's arrival
/// is the moment the kernel delivered it, not the later moment the control thread woke to read
/// it.
///
/// The ALSA sequencer stamps every event delivered to bellkeys' port with the current time of
/// bellkeys' own queue (port timestamping). The queue's time and `CLOCK_MONOTONIC` both come from
/// the kernel's ktime, so their difference is constant while the queue timer ticks on time, as it
/// does on real hardware. A tick that runs late makes the kernel count its lateness in whole ticks
/// and then fire again at once for each of them (`snd_hrtimer_callback` adds the drift to the
/// ticks but moves the expiry one period only), so after a stall the queue's time jumps ahead.
/// The difference, monotonic minus queue, then drops.
///
/// It is measured each time the control thread wakes, before it reads (`sample`): the queue's time
/// read between two monotonic readings; a sample whose two readings are further apart than
/// `maximumBracket` (the thread was preempted in between) is ignored. The events read
/// at one wake-up were delivered after the previous wake-up's measurement, so the offset valid
/// at their delivery is that measurement's or the new one's. `offset` is the larger of the two:
/// right for an event delivered before a jump, and, for one delivered after it, a stamp late by
/// at most the jump, which `arrival` then limits to the read. It is never early, which would put
/// the note before its time.
///
/// Thread: control.
public struct DeliveryClock: Sendable {
    /// The widest bracket a sample may have: an ioctl takes a few microseconds.
    public static let maximumBracket: Duration = .microseconds(200)
    /// The last two good samples, the newer last.
    private var older: Int64?
    private var newer: Int64?

    /// Monotonic time minus queue time, in nanoseconds, for events read now: the larger of the
    /// last two samples. Nil before the first good sample.
    public var offset: Int64? {
        switch (older, newer) {
        case let (o?, n?): max(o, n)
        case let (o, n): n ?? o
        }
    }

    public init() {}

    /// Offers a measurement: the queue's time `queue`, read between the monotonic readings
    /// `before` and `after`. Returns whether it was kept.
    @discardableResult
    public mutating func sample(before: MonotonicInstant, queue: UInt64, after: MonotonicInstant) -> Bool {
        guard before <= after, after - before <= Self.maximumBracket else { return false }
        let middle = before.nanoseconds + (after.nanoseconds - before.nanoseconds) / 2
        older = newer
        newer = Int64(bitPattern: middle) &- Int64(bitPattern: queue)
        return true
    }

    /// The monotonic time of a delivery stamped `queue` on the queue, given that it was read at
    /// `now`. Without a measurement, or for a stamp that would lie after `now`, it is `now`: an
    /// event never arrives after it was read.
    public func arrival(queue: UInt64, readAt now: MonotonicInstant) -> MonotonicInstant {
        guard let offset else { return now }
        let stamped = Int64(bitPattern: queue) &+ offset
        return stamped < 0 ? now : min(now, MonotonicInstant(nanoseconds: UInt64(stamped)))
    }
}
