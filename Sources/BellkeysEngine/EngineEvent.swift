/// A MIDI channel message scheduled for one output frame.
///
/// `status` is the MIDI status byte (0x80 note-off, 0x90 note-on, 0xB0 control change, with the
/// channel in the low nibble); other statuses are ignored by the engine.
public struct EngineEvent: Sendable, Equatable {
    /// Absolute output frame at which the event takes effect.
    public var frame: Int64
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8

    public init(frame: Int64, status: UInt8, data1: UInt8, data2: UInt8) {
        self.frame = frame
        self.status = status
        self.data1 = data1
        self.data2 = data2
    }

    public static func noteOn(frame: Int64, channel: Int = 0, note: Int, velocity: Int) -> Self {
        Self(frame: frame, status: 0x90 | UInt8(channel & 15), data1: UInt8(note & 127),
             data2: UInt8(velocity & 127))
    }

    public static func noteOff(frame: Int64, channel: Int = 0, note: Int) -> Self {
        Self(frame: frame, status: 0x80 | UInt8(channel & 15), data1: UInt8(note & 127), data2: 0)
    }

    public static func control(frame: Int64, channel: Int = 0, controller: Int, value: Int) -> Self {
        Self(frame: frame, status: 0xB0 | UInt8(channel & 15), data1: UInt8(controller & 127),
             data2: UInt8(value & 127))
    }
}
