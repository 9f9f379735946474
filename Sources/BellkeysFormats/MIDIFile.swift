import BellkeysModel

/// A problem reading a Standard MIDI File.
public struct MIDIFileError: Error, Sendable, CustomStringConvertible {
    public var file: String
    /// Byte offset in the file where the problem was found.
    public var offset: Int?
    public var message: String
    public var fix: String

    public var description: String {
        let at = offset.map { " (at byte \($0))" } ?? ""
        return "\(file): \(message)\(at)\n    fix: \(fix)"
    }
}

/// How a MIDI file counts time.
public enum MIDIDivision: Sendable, Equatable {
    /// Ticks per quarter note; the tempo map gives quarter-note lengths.
    case ticksPerQuarter(Int)
    /// SMPTE: frames per second (24, 25, 29 meaning 29.97, or 30) and ticks per frame.
    case smpte(framesPerSecond: Int, ticksPerFrame: Int)
}

/// A channel message at a tick.
public struct MIDITimedEvent: Sendable, Equatable {
    public var tick: Int
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
}

/// A tempo change: from `tick` on, a quarter note lasts `microsecondsPerQuarter`.
public struct MIDITempo: Sendable, Equatable {
    public var tick: Int
    public var microsecondsPerQuarter: Int
}

/// A Standard MIDI File reduced to what a player needs: channel messages of all tracks merged
/// in time order, the tempo map, and the length. Format 0 and 1 tracks play together; the
/// tracks of a format 2 file are independent sequences, played one after the other (each from
/// 120 beats per minute until it sets its own tempo).
public struct MIDIFile: Sendable {
    public var format: Int
    public var trackCount: Int
    public var division: MIDIDivision
    /// Channel messages of every track, sorted by tick; simultaneous events keep track order,
    /// then file order.
    public var events: [MIDITimedEvent]
    /// Tempo changes in tick order; before the first, 120 beats per minute.
    public var tempos: [MIDITempo]
    /// The last tick of any track (its end-of-track event); for format 2, the end of the last
    /// sequence (the sequences' lengths added up).
    public var endTick: Int
    /// What was wrong with the file but could be played round, each worded for the user
    /// ("FILE: what (at byte N)" and what was done about it).
    public var warnings: [String] = []

    /// The longest performance `render` accepts, so that a corrupt delta time cannot ask for
    /// days of audio.
    public static let maximumSeconds = 24 * 3600

    /// Output frame of `tick`: round(seconds × sampleRate), computed exactly in integers.
    public func frame(atTick tick: Int, sampleRate: Int) -> Int64 {
        var converter = TickConverter(file: self, sampleRate: sampleRate)
        return converter.frame(atTick: tick)
    }

    /// Every channel message as an engine event at its output frame (`transposable`: a MIDI
    /// input's, as a file a user brings is; bellkeys' own demo tune is not), and the frame of the
    /// end of the file; `startFrame` is the frame of tick 0.
    public func scheduled(sampleRate: Int, startFrame: Int64 = 0, transposable: Bool = true) -> (
        events: [EngineEvent], endFrame: Int64
    ) {
        var converter = TickConverter(file: self, sampleRate: sampleRate)
        let events = self.events.map {
            EngineEvent(
                frame: startFrame + converter.frame(atTick: $0.tick), status: $0.status, data1: $0.data1,
                data2: $0.data2, transposable: transposable)
        }
        return (events, startFrame + converter.frame(atTick: endTick))
    }
}

/// Converts ascending ticks to frames: time in units of 1/(ticksPerQuarter × 10⁶) s is an exact
/// integer sum of ticks × tempo; frames are that × rate, divided and rounded half up.
struct TickConverter {
    let file: MIDIFile
    let rate: Int128
    var tempoIndex = 0
    var segmentTick = 0
    var segmentTime: Int128 = 0
    var tempo = 500_000

    init(file: MIDIFile, sampleRate: Int) {
        self.file = file
        rate = Int128(sampleRate)
    }

    mutating func frame(atTick tick: Int) -> Int64 {
        switch file.division {
        case .smpte(let fps, let ticksPerFrame):
            // seconds = tick / (fps × ticksPerFrame); 29 means 30000/1001 frames per second.
            let (num, den): (Int128, Int128) =
                fps == 29
                ? (1001, 30_000 * Int128(ticksPerFrame))
                : (1, Int128(fps * ticksPerFrame))
            return Int64(roundedDivision(Int128(tick) * rate * num, den))
        case .ticksPerQuarter(let ppq):
            if tick < segmentTick { self = TickConverter(file: file, sampleRate: Int(rate)) }
            while tempoIndex < file.tempos.count, file.tempos[tempoIndex].tick <= tick {
                let change = file.tempos[tempoIndex]
                segmentTime += Int128(change.tick - segmentTick) * Int128(tempo)
                segmentTick = change.tick
                tempo = change.microsecondsPerQuarter
                tempoIndex += 1
            }
            let time = segmentTime + Int128(tick - segmentTick) * Int128(tempo)
            return Int64(roundedDivision(time * rate, Int128(ppq) * 1_000_000))
        }
    }

    func roundedDivision(_ a: Int128, _ b: Int128) -> Int128 { (2 * a + b) / (2 * b) }
}

/// Writes a format 1 Standard MIDI File (used by the sample generator and tests).
/// `tracks` hold (tick, bytes) events in tick order; a tempo in µs per quarter goes first.
public func makeMIDIFile(
    ticksPerQuarter: Int, microsecondsPerQuarter: Int = 500_000,
    tracks: [[(tick: Int, bytes: [UInt8])]], format: Int = 1
) -> [UInt8] {
    func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8((v >> ($0 * 8)) & 0xFF) } }
    func vlq(_ v: Int) -> [UInt8] {
        var out = [UInt8(v & 0x7F)]
        var v = v >> 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }
    var file: [UInt8] = Array("MThd".utf8) + be(6, 4) + be(format, 2) + be(tracks.count, 2) + be(ticksPerQuarter, 2)
    for (index, track) in tracks.enumerated() {
        var body: [UInt8] = []
        var last = 0
        if index == 0 { body += [0x00, 0xFF, 0x51, 0x03] + be(microsecondsPerQuarter, 3) }
        for event in track {
            body += vlq(event.tick - last) + event.bytes
            last = event.tick
        }
        body += [0x00, 0xFF, 0x2F, 0x00]
        file += Array("MTrk".utf8) + be(body.count, 4) + body
    }
    return file
}
