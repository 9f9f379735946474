import BellkeysFormats

// The follow-along: the teacher starts a tune at a tempo, and each phone is shown when its own
// bells are due. The tune's notes are cued, not played: the pupils ring them (there is no guide
// voice). Cues carry the time they are due on bellkeys' clock; each page turns that into its own
// clock with the offset it measures as NTP does (pings over the socket), so a cue shows at the
// right moment whatever the Wi-Fi's delay, rather than being sent as "now!".
//
// A strike is judged against the nearest cue of that bell for that device: on time within
// ±`onTimeMilliseconds` (150 ms), early or late up to ±`windowMilliseconds` (600 ms); a cue with
// no strike by then is missed. The strike's time is the tap's, as the page stamped it on
// bellkeys' clock (`at`), when that is within a second of its arrival, else its arrival.
// Plain state with times passed in (monotonic nanoseconds). Thread: the server's.

/// A tune's notes as cues: times at the written tempo, notes moved by octaves onto the bells.
public struct FollowTune: Sendable {
    public let name: String
    /// (milliseconds from the start, note), in time order.
    public let cues: [(milliseconds: Int64, note: Int)]
    /// Notes that no octave move puts on a bell, left out.
    public let leftOut: Int
    public static let maximumCues = 4_000

    /// A tune of `cues` as given.
    public init(name: String, cues: [(milliseconds: Int64, note: Int)]) {
        self.name = name
        self.cues = cues
        leftOut = 0
    }

    public init(name: String, file: MIDIFile, bells: [Int]) {
        self.name = name
        var cues: [(Int64, Int)] = []
        var leftOut = 0
        let lowest = bells.min() ?? 0, highest = bells.max() ?? 127
        for event in file.scheduled(sampleRate: 1000).events where event.status & 0xF0 == 0x90 && event.data2 > 0 {
            var note = Int(event.data1)
            while note < lowest, note + 12 <= 127 { note += 12 }
            while note > highest, note - 12 >= 0 { note -= 12 }
            guard bells.contains(note), cues.count < Self.maximumCues else {
                leftOut += 1
                continue
            }
            // A chord's doubled notes are one cue.
            if cues.contains(where: { $0.0 == event.frame && $0.1 == note }) { continue }
            cues.append((event.frame, note))
        }
        self.cues = cues
        self.leftOut = leftOut
    }
}

public final class FollowAlong {
    public enum Result: String, Sendable { case onTime, early, late, missed }

    public struct Cue: Sendable {
        public let index: Int
        public let note: Int
        /// When it is due, on bellkeys' clock (monotonic ns).
        public let at: UInt64
        /// The devices cued (those holding the bell when the cue was sent), and those judged.
        public fileprivate(set) var expected: [Int] = []
        public fileprivate(set) var judged: [Int] = []
        public fileprivate(set) var sent = false
    }

    public struct Tally: Equatable, Sendable {
        public var onTime = 0, early = 0, late = 0, missed = 0
        /// The last strike's difference from its cue (ms; negative early).
        public var lastMilliseconds: Double?
        public init(onTime: Int = 0, early: Int = 0, late: Int = 0, missed: Int = 0, lastMilliseconds: Double? = nil) {
            self.onTime = onTime
            self.early = early
            self.late = late
            self.missed = missed
            self.lastMilliseconds = lastMilliseconds
        }
    }

    public static let onTimeMilliseconds = 150.0
    public static let windowMilliseconds = 600.0
    /// How far ahead cues are sent (the page counts down the last 3 s).
    public static let leadNanoseconds: UInt64 = 4_000_000_000

    public let tune: FollowTune
    /// Percent of the written tempo (50 to 200).
    public let tempo: Int
    public let start: UInt64
    public private(set) var cues: [Cue]
    public private(set) var tallies: [Int: Tally] = [:]
    private var nextToSend = 0
    private var nextToClose = 0

    /// Starts `tune` at `tempo` percent, its first beat at `start`.
    public init(tune: FollowTune, tempo: Int, start: UInt64) {
        self.tune = tune
        self.tempo = tempo
        self.start = start
        cues = tune.cues.enumerated().map { i, cue in
            // At most a day in (a file's delta times can say anything).
            Cue(
                index: i, note: cue.note,
                at: start + UInt64(min(max(0, cue.milliseconds), 86_400_000)) * 100 * 1_000_000 / UInt64(max(1, tempo)))
        }
    }

    /// When the last cue's window closes: the follow-along is over.
    public var end: UInt64 { (cues.last?.at ?? start) + UInt64(Self.windowMilliseconds * 1e6) }

    /// The cues due within the lead from `now` not sent yet, each with the devices to send it
    /// to (`holders(note)`: who holds that bell now); they are marked sent.
    public func cuesToSend(at now: UInt64, holders: (Int) -> [Int]) -> [Cue] {
        var out: [Cue] = []
        while nextToSend < cues.count, cues[nextToSend].at <= now + Self.leadNanoseconds {
            cues[nextToSend].expected = holders(cues[nextToSend].note)
            cues[nextToSend].sent = true
            out.append(cues[nextToSend])
            nextToSend += 1
        }
        return out
    }

    /// Judges `device`'s strike of `note` at `at` against the nearest cue of that bell sent to
    /// it and not yet judged for it, within the window. Nil when there is none.
    public func judge(device: Int, note: Int, at: UInt64) -> (result: Result, milliseconds: Double, cue: Int)? {
        var best: (Int, Double)?
        for k in nextToClose..<nextToSend
        where cues[k].note == note && cues[k].expected.contains(device) && !cues[k].judged.contains(device) {
            let ms = (Double(at) - Double(cues[k].at)) / 1e6
            if abs(ms) <= Self.windowMilliseconds, best == nil || abs(ms) < abs(best!.1) { best = (k, ms) }
        }
        guard let (k, ms) = best else { return nil }
        cues[k].judged.append(device)
        let result: Result = abs(ms) <= Self.onTimeMilliseconds ? .onTime : (ms < 0 ? .early : .late)
        count(result, device: device, milliseconds: ms)
        return (result, ms, k)
    }

    /// The cues whose window has closed by `now`: each device cued and not judged missed it.
    /// Returns (device, cue index) for each miss.
    public func closeWindows(at now: UInt64) -> [(device: Int, cue: Int)] {
        var missed: [(Int, Int)] = []
        let window = UInt64(Self.windowMilliseconds * 1e6)
        while nextToClose < nextToSend, cues[nextToClose].at + window < now {
            for device in cues[nextToClose].expected where !cues[nextToClose].judged.contains(device) {
                count(.missed, device: device, milliseconds: nil)
                missed.append((device, nextToClose))
            }
            nextToClose += 1
        }
        return missed
    }

    /// Whether every cue's window has closed.
    public var isOver: Bool { nextToClose == cues.count }

    private func count(_ result: Result, device: Int, milliseconds: Double?) {
        var tally = tallies[device, default: Tally()]
        switch result {
        case .onTime: tally.onTime += 1
        case .early: tally.early += 1
        case .late: tally.late += 1
        case .missed: tally.missed += 1
        }
        if let milliseconds { tally.lastMilliseconds = milliseconds }
        tallies[device] = tally
    }

    /// A device's tally as JSON for the teacher.
    public func tallyJSON(device: Int) -> String {
        let t = tallies[device, default: Tally()]
        return "{\"onTime\":\(t.onTime),\"early\":\(t.early),\"late\":\(t.late),\"missed\":\(t.missed)"
            + ",\"lastMs\":\(t.lastMilliseconds.map { String(Int($0.rounded())) } ?? "null")}"
    }
}
