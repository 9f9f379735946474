/// A MIDI channel message scheduled for one output frame.
///
/// `status` is the MIDI status byte (0x80 note-off, 0x90 note-on, 0xA0 key pressure, 0xB0
/// control change, 0xC0 program change, 0xD0 channel pressure, 0xE0 pitch bend, with the
/// channel in the low nibble); others are ignored.
public struct EngineEvent: Sendable, Equatable {
    /// Absolute output frame at which the event takes effect.
    public var frame: Int64
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
    /// Whether the event comes from a MIDI input (a keyboard through ALSA or JACK, a MIDI file),
    /// whose notes the engine moves by its transposition (`EngineConfiguration.transpose`),
    /// keyswitches excepted. The computer keyboard's and the phones' notes are not moved.
    public var transposable: Bool

    public init(frame: Int64, status: UInt8, data1: UInt8, data2: UInt8, transposable: Bool = false) {
        self.frame = frame
        self.status = status
        self.data1 = data1
        self.data2 = data2
        self.transposable = transposable
    }

    public static func noteOn(frame: Int64, channel: Int = 0, note: Int, velocity: Int) -> Self {
        Self(
            frame: frame, status: 0x90 | UInt8(channel & 15), data1: UInt8(note & 127),
            data2: UInt8(velocity & 127))
    }

    public static func noteOff(frame: Int64, channel: Int = 0, note: Int) -> Self {
        Self(frame: frame, status: 0x80 | UInt8(channel & 15), data1: UInt8(note & 127), data2: 0)
    }

    public static func pitchBend(frame: Int64, channel: Int = 0, value: Int) -> Self {
        Self(
            frame: frame, status: 0xE0 | UInt8(channel & 15), data1: UInt8(value & 127),
            data2: UInt8(value >> 7 & 127))
    }

    public static func control(frame: Int64, channel: Int = 0, controller: Int, value: Int) -> Self {
        Self(
            frame: frame, status: 0xB0 | UInt8(channel & 15), data1: UInt8(controller & 127),
            data2: UInt8(value & 127))
    }

    public static func programChange(frame: Int64, channel: Int = 0, program: Int) -> Self {
        Self(frame: frame, status: 0xC0 | UInt8(channel & 15), data1: UInt8(program & 127), data2: 0)
    }

    public static func keyPressure(frame: Int64, channel: Int = 0, note: Int, value: Int) -> Self {
        Self(
            frame: frame, status: 0xA0 | UInt8(channel & 15), data1: UInt8(note & 127), data2: UInt8(value & 127))
    }

    public static func channelPressure(frame: Int64, channel: Int = 0, value: Int) -> Self {
        Self(frame: frame, status: 0xD0 | UInt8(channel & 15), data1: UInt8(value & 127), data2: 0)
    }

    /// The event for a raw MIDI message of `count` bytes at `bytes` (a JACK MIDI event: a MIDI
    /// input's, `transposable`), or nil
    /// for anything the engine does not play (only note-off, note-on, key pressure, control
    /// change and pitch bend, whole, with data bytes below 0x80, and program change and channel
    /// pressure, of one data byte).
    /// Thread: any. Real-time safe.
    @_noLocks
    public init?(midi bytes: UnsafePointer<UInt8>, count: Int, frame: Int64) {
        guard count >= 2 else { return nil }
        let status = bytes[0], kind = status & 0xF0
        if kind == 0xC0 || kind == 0xD0 {
            guard count == 2, bytes[1] < 0x80 else { return nil }
            self.init(frame: frame, status: status, data1: bytes[1], data2: 0, transposable: true)
            return
        }
        guard count == 3 else { return nil }
        let data1 = bytes[1], data2 = bytes[2]
        guard kind == 0x80 || kind == 0x90 || kind == 0xA0 || kind == 0xB0 || kind == 0xE0, data1 < 0x80,
            data2 < 0x80
        else {
            return nil
        }
        self.init(frame: frame, status: status, data1: data1, data2: data2, transposable: true)
    }

    /// The MIDI channel (0...15) the event acts on: a channel message's, or for the set event
    /// (`Engine.setStatus`) the channel in its first data byte. Thread: any.
    @inlinable
    public var channel: UInt8 {
        @_noLocks get { status == 0xF5 ? data1 & 0x0F : status & 0x0F } // 0xF5: Engine.setStatus
    }

    /// The set a set event (`Engine.setEvent`) chooses: the first data byte's high 4 bits over
    /// the second's 8. Thread: any.
    @inlinable
    public var chosenSet: Int {
        @_noLocks get { Int(data1 >> 4) << 8 | Int(data2) }
    }

    /// Whether the event strikes a bell (a note-on with a velocity). Everything else (note-offs,
    /// velocity-0 note-ons, controllers) also goes to the engine of a map being replaced while
    /// its bells ring out, so that they are damped and pedalled as played. Thread: any.
    @inlinable
    public var strikes: Bool {
        @_noLocks get { status & 0xF0 == 0x90 && data2 != 0 }
    }
}
