/// When a sound device's buffer should grow: the rule that heals a default buffer too small for
/// the machine. The output starts at the default size; after `underrunLimit` underruns within
/// `window` it asks for the next size: twice the period up to `largest.periodFrames`,
/// then one more period up to `largest.periods`. A size the user chose is never changed (the
/// output makes no `BufferGrowth` then). Pure: the driver reports underruns and applies sizes.
/// Thread: control.
public struct BufferGrowth: Sendable, Equatable {
    /// A device buffer: `periods` periods of `periodFrames` frames.
    public struct Size: Sendable, Equatable, CustomStringConvertible {
        public var periodFrames: Int
        public var periods: Int

        public init(periodFrames: Int, periods: Int) {
            self.periodFrames = periodFrames
            self.periods = periods
        }

        public var frames: Int { periodFrames * periods }
        /// "128 × 2 frames".
        public var description: String { "\(periodFrames) × \(periods) frames" }
    }

    /// The largest buffer it grows to: 512 × 4 frames (43 ms at 48 kHz).
    public static let largest = Size(periodFrames: 512, periods: 4)
    /// Underruns within the window that make it grow.
    public static let underrunLimit = 3
    /// The window: 10 s.
    public static let window: Duration = .seconds(10)

    /// The size it started at (the default).
    public let first: Size
    /// The size now (as granted by the device after each step).
    public private(set) var size: Size
    /// Times it grew.
    public private(set) var steps = 0
    /// Arrival times of the latest underruns (at most `underrunLimit`), oldest first.
    private var recent: [MonotonicInstant] = []
    /// The device's underrun count when last looked at.
    private var seen = 0

    public init(size: Size) {
        first = size
        self.size = size
    }

    /// The size after `size`, or nil at the largest: the period doubles first (a longer period
    /// costs the render thread fewer wake-ups, which is what a slow machine lacks), then the
    /// buffer takes one more period.
    public static func next(after size: Size) -> Size? {
        if size.periodFrames < largest.periodFrames {
            return Size(periodFrames: min(size.periodFrames * 2, largest.periodFrames), periods: size.periods)
        }
        if size.periods < largest.periods { return Size(periodFrames: size.periodFrames, periods: size.periods + 1) }
        return nil
    }

    /// Looks at the device's underrun count `underruns` (since it was opened at `size`) at
    /// `now`. Returns the size to grow to when `underrunLimit` underruns fell
    /// within the window, else nil. Each new underrun counts as seen now: the loop looks as soon
    /// as the device signals one.
    public mutating func observe(underruns: Int, now: MonotonicInstant) -> Size? {
        let new = underruns - seen
        seen = underruns
        guard new > 0 else { return nil }
        for _ in 0..<min(new, Self.underrunLimit) { recent.append(now) }
        if recent.count > Self.underrunLimit { recent.removeFirst(recent.count - Self.underrunLimit) }
        guard !stuck, recent.count == Self.underrunLimit, now - recent[0] <= Self.window,
            let next = Self.next(after: size)
        else { return nil }
        return next
    }

    /// The device now runs at `granted` (what it gave for the size asked), with its underrun
    /// count starting again at 0. Underruns before it are forgotten. Returns false when the
    /// device gave no more room than before: it will not be asked again.
    @discardableResult
    public mutating func grew(to granted: Size) -> Bool {
        recent.removeAll()
        seen = 0
        guard granted.frames > size.frames else {
            stuck = true
            return false
        }
        size = granted
        steps += 1
        return true
    }

    /// Whether the device refused to grow (it will not be asked again).
    public private(set) var stuck = false

    /// Whether it may still grow.
    public var canGrow: Bool { !stuck && Self.next(after: size) != nil }
}
