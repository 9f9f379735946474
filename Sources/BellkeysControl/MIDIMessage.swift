import BellkeysEngine
import BellkeysModel

/// A MIDI channel message, the form every live input hands to `LivePlayer`: the control side
/// matches on these cases instead of decoding status bytes. Channels are 0...15 and data bytes
/// 0...127: `init(status:data1:data2:)` masks them, and so do `bytes`, `channel` and
/// `event(atFrame:)`, so a case built with a larger value (a channel of 16) is read masked,
/// never out of range. Thread: any (a value).
public enum MIDIMessage: Hashable, Sendable {
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    /// Pitch bend, 0...16383 (8192: the centre).
    case pitchBend(channel: UInt8, value: UInt16)
    /// Program change: chooses the channel's set of bells (program 0...127 as sent on the wire).
    case programChange(channel: UInt8, program: UInt8)
    /// Polyphonic key pressure (aftertouch) on one key, and channel pressure, 0...127.
    case keyPressure(channel: UInt8, note: UInt8, value: UInt8)
    case channelPressure(channel: UInt8, value: UInt8)

    /// The message of a status byte and its data bytes (a program change and channel pressure
    /// have one: `data2` is not read); nil for messages bellkeys does not play (system
    /// messages). A note-on with velocity 0 stays a note-on, as the bytes say (the engine
    /// releases the key for it, as MIDI asks).
    public init?(status: UInt8, data1: UInt8, data2: UInt8) {
        let channel = status & 0x0F, data1 = data1 & 0x7F, data2 = data2 & 0x7F
        switch status & 0xF0 {
        case 0x80: self = .noteOff(channel: channel, note: data1, velocity: data2)
        case 0x90: self = .noteOn(channel: channel, note: data1, velocity: data2)
        case 0xB0: self = .controlChange(channel: channel, controller: data1, value: data2)
        case 0xE0: self = .pitchBend(channel: channel, value: UInt16(data2) << 7 | UInt16(data1))
        case 0xC0: self = .programChange(channel: channel, program: data1)
        case 0xA0: self = .keyPressure(channel: channel, note: data1, value: data2)
        case 0xD0: self = .channelPressure(channel: channel, value: data1)
        default: return nil
        }
    }

    /// The message an engine event carries, if the engine plays it.
    public init?(_ event: EngineEvent) {
        self.init(status: event.status, data1: event.data1, data2: event.data2)
    }

    /// Status byte (with the channel) and data bytes.
    public var bytes: (status: UInt8, data1: UInt8, data2: UInt8) {
        switch self {
        case .noteOn(let channel, let note, let velocity): (0x90 | channel & 0x0F, note & 0x7F, velocity & 0x7F)
        case .noteOff(let channel, let note, let velocity): (0x80 | channel & 0x0F, note & 0x7F, velocity & 0x7F)
        case .controlChange(let channel, let controller, let value):
            (0xB0 | channel & 0x0F, controller & 0x7F, value & 0x7F)
        case .pitchBend(let channel, let value):
            (0xE0 | channel & 0x0F, UInt8(value & 0x7F), UInt8(value >> 7 & 0x7F))
        case .programChange(let channel, let program): (0xC0 | channel & 0x0F, program & 0x7F, 0)
        case .keyPressure(let channel, let note, let value): (0xA0 | channel & 0x0F, note & 0x7F, value & 0x7F)
        case .channelPressure(let channel, let value): (0xD0 | channel & 0x0F, value & 0x7F, 0)
        }
    }

    /// The channel, 0...15.
    public var channel: UInt8 { bytes.status & 0x0F }

    /// The same message with every value in range (channel 0...15, data 0...127).
    public var masked: MIDIMessage { MIDIMessage(status: bytes.status, data1: bytes.data1, data2: bytes.data2)! }

    /// Whether this is a note-on, of any velocity (a velocity-0 note-on releases its key).
    public var isNoteOn: Bool {
        if case .noteOn = self { true } else { false }
    }

    /// Whether this is a note-off message.
    public var isNoteOff: Bool {
        if case .noteOff = self { true } else { false }
    }

    /// Whether this strikes a note (a note-on with a velocity).
    public var isStrike: Bool {
        if case .noteOn(_, _, let velocity) = self { return velocity > 0 }
        return false
    }

    /// The engine event that plays this message at `frame` (`transposable`: from a MIDI input).
    public func event(atFrame frame: Int64, transposable: Bool = false) -> EngineEvent {
        let (status, data1, data2) = bytes
        return EngineEvent(frame: frame, status: status, data1: data1, data2: data2, transposable: transposable)
    }

    /// Controller numbers bellkeys acts on.
    public enum Controller {
        public static let volume: UInt8 = 7
        public static let expression: UInt8 = 11
        public static let pan: UInt8 = 10
        public static let reverbSend: UInt8 = 91
        public static let sustain: UInt8 = 64
        public static let allSoundOff: UInt8 = 120
        public static let allNotesOff: UInt8 = 123
    }
}

extension LivePlayer {
    /// The controllers a reloaded map's engine hears again, once played.
    public static let replayedControllers: [UInt8] = [
        MIDIMessage.Controller.volume, MIDIMessage.Controller.expression, MIDIMessage.Controller.sustain,
        MIDIMessage.Controller.pan, MIDIMessage.Controller.reverbSend,
        0, 32, // bank select, for the program change replayed after them
        1, // the mod wheel: a SoundFont's vibrato
    ]
}
