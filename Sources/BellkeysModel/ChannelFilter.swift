/// Which MIDI channels are played (`--channel`, `--skip-drums`): one rule for every input, the
/// live keyboards (ALSA or JACK) and the files rendered alike.
public struct ChannelFilter: Sendable, Equatable {
    /// The only channel played (0...15), or nil for every channel.
    public var channel: UInt8?
    /// Leaves out channel 10 (index 9), where General MIDI puts the drums.
    public var skipsDrums: Bool

    /// Every channel.
    public static let all = ChannelFilter()

    public init(channel: UInt8? = nil, skipsDrums: Bool = false) {
        self.channel = channel
        self.skipsDrums = skipsDrums
    }

    /// Index of General MIDI's drum channel (channel 10).
    public static let drumChannel: UInt8 = 9

    /// Whether a channel message with this status byte is played.
    /// Thread: any (the JACK process callback calls it). Real-time safe.
    @_noLocks
    @inline(__always)
    public func accepts(status: UInt8) -> Bool {
        let messageChannel = status & 0x0F
        if skipsDrums {
            if messageChannel == ChannelFilter.drumChannel { return false }
        }
        if let channel {
            if messageChannel != channel { return false }
        }
        return true
    }

    /// `events` without those this filter leaves out (system messages are kept).
    public func apply(_ events: [EngineEvent]) -> [EngineEvent] {
        if self == .all { return events }
        return events.filter { $0.status >= 0xF0 || accepts(status: $0.status) }
    }
}
