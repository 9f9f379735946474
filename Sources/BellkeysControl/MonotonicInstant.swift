/// A moment on the system's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds: when an event
/// arrived, when the loop woke. What crosses from an input to the player is this value, never a
/// bare integer that might be a duration, a queue time or a frame.
///
/// Instants subtract to a `Duration` and move by one; two instants never add. The render thread
/// keeps its own raw readings (`monotonicNanoseconds`), and the frame clock turns an instant into
/// a frame with the raw value (`FrameClock.Stamper`), so nothing on the render path sees this type.
///
/// Thread: any.
public struct MonotonicInstant: Hashable, Comparable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    /// Nanoseconds since the clock's start (the system's boot, give or take).
    public var nanoseconds: UInt64

    @inlinable public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// A literal is nanoseconds, as tests write their arrivals.
    @inlinable public init(integerLiteral value: UInt64) { nanoseconds = value }

    @inlinable public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// How long after `b` the instant `a` is: negative when `a` is the earlier.
    public static func - (a: Self, b: Self) -> Duration {
        .nanoseconds(Int64(bitPattern: a.nanoseconds &- b.nanoseconds))
    }

    /// The instant `d` after `a` (before it, for a negative `d`). A duration finer than a
    /// nanosecond is dropped.
    public static func + (a: Self, d: Duration) -> Self {
        Self(nanoseconds: a.nanoseconds &+ UInt64(bitPattern: d.wholeNanoseconds))
    }

    /// The instant `d` before `a`.
    public static func - (a: Self, d: Duration) -> Self {
        Self(nanoseconds: a.nanoseconds &- UInt64(bitPattern: d.wholeNanoseconds))
    }

    public static func += (a: inout Self, d: Duration) { a = a + d }

    /// Seconds since the clock's start, for arithmetic in floating point (a key's repeat rate).
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public var description: String { "\(nanoseconds) ns" }
}

extension Duration {
    /// The duration in whole nanoseconds, toward zero (clamped to what 64 bits hold).
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let total = Int128(seconds) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000)
        return Int64(clamping: total)
    }
}
