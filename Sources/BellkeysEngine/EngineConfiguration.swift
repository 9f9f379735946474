/// Settings fixed for the life of an `Engine`.
public struct EngineConfiguration: Sendable {
    /// Output frames per second.
    public var sampleRate: Int
    /// Voices that may sound at once before one is stolen. Default 128: 6-second bells struck
    /// 21 times a second before any is stolen, at under 0.2 % of one core (see docs/performance.md).
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

    public init(sampleRate: Int, polyphony: Int = 128) {
        self.sampleRate = sampleRate
        self.polyphony = polyphony
    }
}
