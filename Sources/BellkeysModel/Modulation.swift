/// A second envelope, for pitch and the filter rather than the level: a SoundFont's modulation
/// envelope. Times in seconds; its level runs from 0 up to 1 and down to `sustain`.
///
/// The engine steps it as FluidSynth 2.3 does, once every 64 frames counted from the voice's
/// first frame: delay at 0; attack up by equal steps to 1, read through the SoundFont convex
/// curve while it rises; hold at 1; decay down by equal steps (a whole fall from 1 to 0 takes
/// `decay`) until it reaches `sustain`; after note-off, release down by equal steps (a whole
/// fall takes `release`) to 0. Each stage is a whole number of steps, counted as FluidSynth
/// counts them (`ModulationTicks` in the engine).
public struct ModulationEnvelope: Sendable, Equatable {
    public var delay: Double
    public var attack: Double
    public var hold: Double
    public var decay: Double
    /// The level held after the decay, 0...1.
    public var sustain: Double
    public var release: Double

    public init(
        delay: Double = 0, attack: Double = 0, hold: Double = 0, decay: Double = 0, sustain: Double = 1,
        release: Double = 0
    ) {
        self.delay = delay
        self.attack = attack
        self.hold = hold
        self.decay = decay
        self.sustain = sustain
        self.release = release
    }
}

/// What moves a voice's pitch and filter while it sounds, beyond the key, the velocity and the
/// wheel: the modulation envelope and its depths. A region without it (`Region.modulation` nil)
/// plays exactly as before it existed.
public struct VoiceModulation: Sendable, Equatable {
    public var envelope: ModulationEnvelope
    /// Cents of pitch at the envelope's full level (SoundFont `modEnvToPitch`), −12,000...12,000.
    public var envelopeToPitchCents: Double

    public init(envelope: ModulationEnvelope = ModulationEnvelope(), envelopeToPitchCents: Double = 0) {
        self.envelope = envelope
        self.envelopeToPitchCents = envelopeToPitchCents
    }
}
