/// Which keys and sustain pedals each live MIDI source holds down, so that when a source goes
/// away (a keyboard unplugged mid-note, a client that quits) its notes can be released
/// instead of ringing on. Thread: the MIDI (producer) thread.
public struct HeldNotes: Sendable {
    /// Per source: 16 channels × 128 notes as bits, and the channels with the pedal down.
    private struct Held: Sendable {
        var notes = [UInt64](repeating: 0, count: 32)
        var pedals: UInt16 = 0
        var isEmpty: Bool { pedals == 0 && notes.allSatisfy { $0 == 0 } }
    }
    private var sources: [Int: Held] = [:]

    public init() {}

    /// Follows one channel message from `source` (any integer naming the sender).
    public mutating func track(source: Int, status: UInt8, data1: UInt8, data2: UInt8) {
        let channel = Int(status & 0x0F), note = Int(data1 & 0x7F)
        let word = channel * 2 + note / 64, bit = UInt64(1) << UInt64(note % 64)
        switch status & 0xF0 {
        case 0x90 where data2 > 0:
            sources[source, default: Held()].notes[word] |= bit
        case 0x80, 0x90:
            sources[source]?.notes[word] &= ~bit
        case 0xB0 where data1 == 64:
            if data2 >= 64 {
                sources[source, default: Held()].pedals |= 1 << UInt16(channel)
            } else {
                sources[source]?.pedals &= ~(1 << UInt16(channel))
            }
        case 0xB0 where data1 == 123 || data1 == 120:
            for n in 0..<2 { sources[source]?.notes[channel * 2 + n] = 0 }
        default:
            break
        }
        if sources[source]?.isEmpty == true { sources[source] = nil }
    }

    /// Forgets `source` and returns the messages that let go of what it held: a note-off for
    /// each of its keys and pedal-up for each of its pedals, skipping any that another source
    /// still holds.
    public mutating func release(source: Int) -> [(status: UInt8, data1: UInt8, data2: UInt8)] {
        guard let held = sources.removeValue(forKey: source) else { return [] }
        var messages: [(status: UInt8, data1: UInt8, data2: UInt8)] = []
        for channel in 0..<16 {
            for note in 0..<128 where held.notes[channel * 2 + note / 64] & (1 << UInt64(note % 64)) != 0 {
                let elsewhere = sources.values.contains { $0.notes[channel * 2 + note / 64] & (1 << UInt64(note % 64)) != 0 }
                if !elsewhere { messages.append((0x80 | UInt8(channel), UInt8(note), 0)) }
            }
            if held.pedals & (1 << UInt16(channel)) != 0,
               !sources.values.contains(where: { $0.pedals & (1 << UInt16(channel)) != 0 }) {
                messages.append((0xB0 | UInt8(channel), 64, 0))
            }
        }
        return messages
    }

    /// Keys held by `source` now (for reports).
    public func noteCount(source: Int) -> Int {
        sources[source]?.notes.reduce(0) { $0 + $1.nonzeroBitCount } ?? 0
    }
}
