import BellkeysModel

// Channel and key pressure (aftertouch): what modulators read (`sourceMoved`).
extension Engine {
    /// Channel pressure on `channel`, 0...127. Thread: render. Real-time safe.
    @_noLocks
    func channelPressure(channel: Int, value: Int) {
        midi.channels[channel].pressure = value
        sourceMoved(channel: channel, source: -4) // ModulatorTerm.channelPressure
    }

    /// Polyphonic pressure on `note` (as it sounds) of `channel`, 0...127. Thread: render.
    /// Real-time safe.
    @_noLocks
    func keyPressure(channel: Int, note: Int, value: Int) {
        midi.keyPressures[128 * channel + note] = UInt8(value)
        sourceMoved(channel: channel, source: -5, note: note) // ModulatorTerm.keyPressure
    }
}
