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
    /// The times as a SoundFont gives them, for a region whose note-on modulators move them (nil
    /// otherwise), `sustainCentibels` holding the sustain generator (tenths of a percent of the
    /// fall): the engine adds the modulators' sums to these and counts each stage in ticks as
    /// FluidSynth does. The seconds above are the same times, counted unmoved.
    public var timecents: EnvelopeTimecents?

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

/// A low-frequency oscillator: a triangle from 0 up to 1, down to −1 and back, starting at the
/// voice's first frame after `delay` seconds, `frequency` times a second. The engine moves it
/// as FluidSynth 2.3 does: once every 64 frames, by 4 × 64 × `frequency` / rate, reflected at ±1.
public struct ModulationLFO: Sendable, Equatable {
    public var delay: Double
    public var frequency: Double

    /// A SoundFont's defaults: no delay to speak of, 8.176 Hz.
    public init(delay: Double = 0, frequency: Double = 8.175_798_915_643_707) {
        self.delay = delay
        self.frequency = frequency
    }
}

/// What moves a voice's pitch, filter and level while it sounds, beyond the key, the velocity
/// and the wheel: the modulation envelope, the modulation LFO and the vibrato LFO, and their
/// depths. A region without it (`Region.modulation` nil) plays exactly as before it existed.
public struct VoiceModulation: Sendable, Equatable {
    public var envelope: ModulationEnvelope
    /// Cents of pitch at the envelope's full level (SoundFont `modEnvToPitch`), −12,000...12,000.
    public var envelopeToPitchCents: Double
    /// Cents of the two-pole low-pass's cutoff at the envelope's full level (SoundFont
    /// `modEnvToFilterFc`), −12,000...12,000: the region's filter moves (a region without one
    /// has none to move).
    public var envelopeToCutoffCents: Double
    /// Where the moving cutoff stays, in Hz (and below 0.45 of the output's rate): by default
    /// a SoundFont's, 1,500 to 13,500 cents above 8.176 Hz (FluidSynth's `fluid_ct2hz`).
    public var cutoffRange: ClosedRange<Double>

    /// The modulation LFO and where it goes (SoundFont `modLfoToPitch`, `modLfoToFilterFc`), in
    /// cents at its peak, −12,000...12,000.
    public var modulationLFO: ModulationLFO
    public var modulationLFOToPitchCents: Double
    public var modulationLFOToCutoffCents: Double
    /// Decibels of level at the modulation LFO's peak (SoundFont `modLfoToVolume`, in tenths),
    /// −96...96: positive is louder at the peak. As in FluidSynth, the level never rises above
    /// the volume envelope's full level: in the attack, or held at full level, the LFO only ever
    /// takes level away (a tremolo of 6 dB at full level dips 6 dB and comes back to 0 dB).
    public var modulationLFOToVolumeDecibels: Double
    /// The vibrato LFO and its depth (SoundFont `vibLfoToPitch`), in cents at its peak.
    public var vibratoLFO: ModulationLFO
    public var vibratoLFOToPitchCents: Double
    /// Whether the cents they move the pitch by are cut down to a whole cent at each step (a
    /// SoundFont's: FluidSynth plays a voice's pitch, its modulation's cents with it, in whole
    /// cents).
    public var pitchInWholeCents = false

    /// A SoundFont filter's range of cutoffs, in Hz.
    public static let soundFontCutoffRange: ClosedRange<Double> = {
        let lowest = 8.175_798_915_643_707 * 2.378_414_230_005_442 // 2^(1500/1200)
        let highest = 8.175_798_915_643_707 * 2_435.496_591_027_272_8 // 2^(13500/1200)
        return lowest...highest
    }()

    public init(
        envelope: ModulationEnvelope = ModulationEnvelope(), envelopeToPitchCents: Double = 0,
        envelopeToCutoffCents: Double = 0, cutoffRange: ClosedRange<Double> = Self.soundFontCutoffRange,
        modulationLFO: ModulationLFO = ModulationLFO(), modulationLFOToPitchCents: Double = 0,
        modulationLFOToCutoffCents: Double = 0, modulationLFOToVolumeDecibels: Double = 0,
        vibratoLFO: ModulationLFO = ModulationLFO(),
        vibratoLFOToPitchCents: Double = 0
    ) {
        self.envelope = envelope
        self.envelopeToPitchCents = envelopeToPitchCents
        self.envelopeToCutoffCents = envelopeToCutoffCents
        self.cutoffRange = cutoffRange
        self.modulationLFO = modulationLFO
        self.modulationLFOToPitchCents = modulationLFOToPitchCents
        self.modulationLFOToCutoffCents = modulationLFOToCutoffCents
        self.modulationLFOToVolumeDecibels = modulationLFOToVolumeDecibels
        self.vibratoLFO = vibratoLFO
        self.vibratoLFOToPitchCents = vibratoLFOToPitchCents
    }
}
