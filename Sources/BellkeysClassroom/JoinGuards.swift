// The limits that keep a classroom full of children (and anything else on the network) from
// guessing their way in or drowning the bells. Plain values with the time passed in
// (monotonic nanoseconds), so tests give exact times. Thread: the server's, one at a time.

/// The code pupils type to join (the "room code" of the pages and the start-up line): 4 digits,
/// new on every start.
public struct JoinCode: Equatable, Sendable, CustomStringConvertible {
    public let digits: String

    /// A new code from `generator` (the system's random source by default: getrandom).
    public init<G: RandomNumberGenerator>(using generator: inout G) {
        digits = String(Int.random(in: 0...9_999, using: &generator)).leftPadded(to: 4)
    }

    public init() {
        var system = SystemRandomNumberGenerator()
        self.init(using: &system)
    }

    /// Whether `guess` is the code, comparing every byte whatever the first difference (no
    /// timing to learn from).
    public func matches(_ guess: String) -> Bool {
        let a = Array(digits.utf8), b = Array(guess.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    public var description: String { digits }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

/// Wrong room codes: each address may guess wrong `perAddress` times in a window of
/// `windowSeconds`; and all addresses together `overall` times, after which every join is
/// refused until the window ends. With 10,000 codes, 5 a minute per address and 30 a minute in
/// all, finding a code takes on average 10,000 / 2 / 30 minutes: over 2 hours, for a code that
/// changes on every start.
public struct JoinGuard: Sendable {
    public let perAddress: Int
    public let overall: Int
    public let windowNanoseconds: UInt64
    /// Wrong guesses in the current window, by address (at most `maximumAddresses` remembered:
    /// past that, new addresses count only toward `overall`).
    private var wrong: [String: Int] = [:]
    private var wrongInAll = 0
    private var windowStart: UInt64?
    public static let maximumAddresses = 1_024

    public init(perAddress: Int = 5, overall: Int = 30, windowSeconds: Double = 60) {
        self.perAddress = perAddress
        self.overall = overall
        windowNanoseconds = UInt64(windowSeconds * 1e9)
    }

    public enum Verdict: Equatable, Sendable {
        case allowed
        /// Refused without looking at the code, for this many more seconds.
        case refused(secondsLeft: Double)
    }

    /// Whether `address` may try a code at `now`.
    public mutating func mayTry(from address: String, at now: UInt64) -> Verdict {
        roll(to: now)
        if wrongInAll >= overall || (wrong[address] ?? 0) >= perAddress {
            let end = (windowStart ?? now) &+ windowNanoseconds
            return .refused(secondsLeft: Double(end > now ? end - now : 0) / 1e9)
        }
        return .allowed
    }

    /// Counts a wrong code from `address` at `now`.
    public mutating func wrongCode(from address: String, at now: UInt64) {
        roll(to: now)
        wrongInAll += 1
        if wrong[address] != nil || wrong.count < JoinGuard.maximumAddresses {
            wrong[address, default: 0] += 1
        }
    }

    /// Wrong guesses in the current window, for the teacher's page.
    public var wrongGuesses: Int { wrongInAll }

    private mutating func roll(to now: UInt64) {
        if let start = windowStart, now >= start, now - start < windowNanoseconds { return }
        windowStart = now
        wrong.removeAll(keepingCapacity: true)
        wrongInAll = 0
    }
}

/// Strikes a device may send: a bucket of `burst` strikes, refilled at `perSecond`. A pupil
/// ringing as fast as a finger can (about 8 taps a second, two bells at once) stays inside;
/// a device that floods is held to `perSecond`, and its extra strikes are dropped and counted.
public struct StrikeLimiter: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var tokens: Double
    private var last: UInt64?
    /// Strikes refused so far.
    public private(set) var refused = 0

    public init(perSecond: Double = 10, burst: Double = 20) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
    }

    /// Whether a strike at `now` may sound (and takes one from the bucket if so).
    public mutating func allow(at now: UInt64) -> Bool {
        if let last, now > last {
            tokens = min(burst, tokens + Double(now - last) / 1e9 * perSecond)
        }
        if last == nil || now > last! { last = now }
        if tokens >= 1 {
            tokens -= 1
            return true
        }
        refused += 1
        return false
    }
}
