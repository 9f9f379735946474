import BellkeysModel

/// Settings fixed for the life of an `Engine`.
public struct EngineConfiguration: Sendable {
    /// Output frames per second.
    public var sampleRate: Int
    /// Voices that may sound at once before one is stolen. Default 128: the bundled bells (10.3 s
    /// on average) struck 12 times a second before any is stolen (see docs/design/performance.md).
    public var polyphony: Int = 128
    /// The render loop works in blocks of at most this many frames.
    public var maxBlockFrames: Int = 64
    /// Frames over which volume, expression and master changes move (64 = 1.3 ms at 48 kHz).
    public var rampFrames: Int = 64
    /// Fade of a stolen or choked voice, and of all-sound-off, in seconds.
    public var fadeSeconds: Double = 0.005
    /// Events the control thread can queue ahead of the render thread.
    public var eventCapacity: Int = 4096
    /// Events that can be scheduled ahead of time (phrase loop, demo tune); see `schedule`.
    public var scheduledCapacity: Int = 1024
    /// Peak limiter threshold, linear (0.891 = -1 dBFS).
    public var limiterThreshold: Float = 0.891
    /// Time for the limiter's gain to recover from full reduction, in seconds.
    public var limiterReleaseSeconds: Double = 0.25
    /// Mix voices with the AVX2 build of the four-voice loop (`MixLoops.swift`): the same bytes,
    /// about twice as fast. Only where the CPU runs it: BellkeysSystem's `wideMixingAvailable()`
    /// says so, and the command line sets it from there. Ignored on other architectures.
    public var wideMixing = false
    /// Skip the mix of a segment at rest (`Engine.isAtRest`): zeros, bit for bit what the mix
    /// gives. Off only in the test that proves that.
    public var skipsRest = true
    /// How transposed samples are interpolated (`InterpolationQuality`).
    public var interpolation = InterpolationQuality.standard

    /// Whether the room can be changed while playing (`Engine.chooseRoom`): the engine then
    /// also holds each room preset at each set's mix, as far as `Engine.maximumRooms` allows.
    public var roomsToChoose = false
    /// Semitones that notes from MIDI inputs (`EngineEvent.transposable`) are moved by, −48...48
    /// (`--transpose`, a map's "transpose"); keys in a keyswitch range are not moved.
    public var transpose = 0

    public init(sampleRate: Int, polyphony: Int = 128) {
        self.sampleRate = sampleRate
        self.polyphony = polyphony
    }
}
