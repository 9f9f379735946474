/// Which keys and sustain pedals each live MIDI source holds down, so that when a source goes
/// away (a keyboard unplugged mid-note, a client that quits) its notes can be released
/// instead of ringing on. Thread: control.
public struct HeldNotes: Sendable {
    /// Per source: 16 channels × 128 notes as bits, and the channels with the pedal down.
    private struct Held: Sendable {
        var notes = [UInt64](repeating: 0, count: 32)
        var pedals: UInt16 = 0
        var isEmpty: Bool { pedals == 0 && notes.allSatisfy { $0 == 0 } }
    }
    private var sources: [Int: Held] = [:]

    public init() {}

    /// Follows one message from `source` (any integer naming the sender).
    public mutating func track(source: Int, _ message: MIDIMessage) {
        switch message {
        case .noteOn(let channel, let note, let velocity) where velocity > 0:
            let (word, bit) = Self.position(channel: channel, note: note)
            sources[source, default: Held()].notes[word] |= bit
        case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
            let (word, bit) = Self.position(channel: channel, note: note)
            sources[source]?.notes[word] &= ~bit
        case .controlChange(let channel, MIDIMessage.Controller.sustain, let value):
            if value >= 64 {
                sources[source, default: Held()].pedals |= 1 << UInt16(channel & 0x0F)
            } else {
                sources[source]?.pedals &= ~(1 << UInt16(channel & 0x0F))
            }
        case .controlChange(let channel, MIDIMessage.Controller.allNotesOff, _),
            .controlChange(let channel, MIDIMessage.Controller.allSoundOff, _):
            for n in 0..<2 { sources[source]?.notes[Int(channel & 0x0F) * 2 + n] = 0 }
        case .controlChange, .pitchBend, .programChange, .keyPressure, .channelPressure:
            break
        }
        if sources[source]?.isEmpty == true { sources[source] = nil }
    }

    /// Where a note's bit is (the channel and note masked to their ranges).
    private static func position(channel: Int, note: Int) -> (word: Int, bit: UInt64) {
        ((channel & 0x0F) * 2 + (note & 0x7F) / 64, UInt64(1) << UInt64(note % 64))
    }

    private static func position(channel: UInt8, note: UInt8) -> (word: Int, bit: UInt64) {
        position(channel: Int(channel), note: Int(note))
    }

    /// Forgets `source` and returns the messages that let go of what it held: a note-off for
    /// each of its keys and pedal-up for each of its pedals, skipping any that another source
    /// still holds.
    public mutating func release(source: Int) -> [MIDIMessage] {
        guard let held = sources.removeValue(forKey: source) else { return [] }
        var messages: [MIDIMessage] = []
        for channel in 0..<16 {
            for note in 0..<128 {
                let (word, bit) = Self.position(channel: channel, note: note)
                guard held.notes[word] & bit != 0 else { continue }
                let elsewhere = sources.values.contains { $0.notes[word] & bit != 0 }
                if !elsewhere { messages.append(.noteOff(channel: UInt8(channel), note: UInt8(note), velocity: 0)) }
            }
            if held.pedals & (1 << UInt16(channel)) != 0,
                !sources.values.contains(where: { $0.pedals & (1 << UInt16(channel)) != 0 })
            {
                messages.append(
                    .controlChange(channel: UInt8(channel), controller: MIDIMessage.Controller.sustain, value: 0))
            }
        }
        return messages
    }

    /// Keys held by `source` now (for reports).
    public func noteCount(source: Int) -> Int {
        sources[source]?.notes.reduce(0) { $0 + $1.nonzeroBitCount } ?? 0
    }
}
