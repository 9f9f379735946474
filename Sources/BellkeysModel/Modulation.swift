/// A second envelope, for pitch and the filter rather than the level: a SoundFont's modulation
/// envelope, an SFZ region's `pitcheg` and `fileg`. Times in seconds; its level runs from
/// `start` up to 1 and down to `sustain`.
///
/// By `ModulationRules.soundFont`, the engine steps it as FluidSynth 2.3 does, once every 64
/// frames counted from the voice's first frame: delay at 0; attack up by equal steps to 1, read
/// through the SoundFont convex curve while it rises; hold at 1; decay down by equal steps (a
/// whole fall from 1 to 0 takes `decay`) until it reaches `sustain`; after note-off, release
/// down by equal steps (a whole fall takes `release`) to 0. Each stage is a whole number of
/// steps, counted as FluidSynth counts them (`ModulationTicks` in the engine).
///
/// By `ModulationRules.sfz`, as sfizz steps its envelopes, frame by frame: delay at `start`;
/// attack in a line from `start` to 1; hold at 1; decay and release falling exponentially, by
/// e^−9 over their time (at least 6 ms) and the decay down to `sustain`; a release that falls
/// below 10^−4, or whose time is 0, ends in a 50 ms line to 0; a sustain at or below 0.32 %
/// releases by itself.
public struct ModulationEnvelope: Sendable, Equatable {
    public var delay: Double
    public var attack: Double
    public var hold: Double
    public var decay: Double
    /// The level held after the decay, 0...1.
    public var sustain: Double
    public var release: Double
    /// The level in the delay, where the attack starts, 0...1 (SFZ `*_start`; a SoundFont's is 0).
    public var start = 0.0
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

/// A low-frequency oscillator's wave, by sfizz's numbers (`lfoN_wave`), each a function of the
/// phase φ in 0..<1. The triangle and the sine start at 0 and rise; the pulses and the square
/// are 1 for the first part of the period and 0 after (unipolar, as in ARIA and sfizz).
public enum LFOWave: Int, Sendable, Equatable, CaseIterable {
    /// 4φ, 2 − 4φ, 4φ − 4.
    case triangle = 0
    /// sfizz's parabolic sine: −4x(1 − |x|) with x = 2φ − 1 (within 0.056 of sin 2πφ).
    case sine = 1
    case pulse75 = 2
    case square = 3
    case pulse25 = 4
    case pulse12 = 5
    /// 2φ − 1.
    case rampUp = 6
    /// 1 − 2φ.
    case sawDown = 7
}

/// A low-frequency oscillator, starting at the voice's first frame after `delay` seconds,
/// `frequency` times a second.
///
/// By `ModulationRules.soundFont` it is a triangle from 0 up to 1, down to −1 and back (its
/// `wave` and `fade` are not read), moved as FluidSynth 2.3 moves it: once every 64 frames, by
/// 4 × 64 × `frequency` / rate, reflected at ±1. By `ModulationRules.sfz` it is `wave` at the
/// phase the frames since its delay give (0 in the delay), faded in over `fade` seconds in a
/// line from 0, as sfizz computes it.
public struct ModulationLFO: Sendable, Equatable {
    public var delay: Double
    public var frequency: Double
    public var wave = LFOWave.triangle
    public var fade = 0.0

    /// A SoundFont's defaults: no delay to speak of, 8.176 Hz.
    public init(delay: Double = 0, frequency: Double = 8.175_798_915_643_707) {
        self.delay = delay
        self.frequency = frequency
    }
}

/// Whose arithmetic a voice's modulation follows: FluidSynth's (a SoundFont's) or sfizz's (an
/// SFZ region's).
public enum ModulationRules: Sendable, Equatable {
    /// FluidSynth 2.3's: the sources move every 64 frames; the envelope in equal steps, the
    /// LFOs as stepped triangles; the pitch follows the envelope's attack through the convex
    /// curve; the tremolo never lifts a voice above its volume envelope's full level.
    case soundFont
    /// sfizz's: the sources move every 16 frames (sfizz moves a filter's cutoff every 16
    /// frames, and its pitch frame by frame); the envelopes fall exponentially; the LFOs are
    /// waves with fades; the tremolo is plain decibels either way.
    case sfz
}

/// What moves a voice's pitch, filter and level while it sounds, beyond the key, the velocity
/// and the wheel: the modulation envelope, the modulation LFO, the vibrato LFO and the filter
/// LFO, and their depths. A region without it (`Region.modulation` nil) plays exactly as before
/// it existed.
public struct VoiceModulation: Sendable, Equatable {
    public var rules = ModulationRules.soundFont
    /// The envelope the pitch follows, and the cutoff too unless `cutoffEnvelope` is given.
    public var envelope: ModulationEnvelope
    /// An envelope of the cutoff's own (SFZ's `fileg` beside `pitcheg`), by `ModulationRules.sfz`
    /// only; nil: the cutoff follows `envelope`.
    public var cutoffEnvelope: ModulationEnvelope? = nil
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
    /// Decibels of level at the modulation LFO's peak (SoundFont `modLfoToVolume`, in tenths;
    /// SFZ `amplfo_depth`), −96...96: positive is louder at the peak. By
    /// `ModulationRules.soundFont`, as in FluidSynth, the level never rises above the volume
    /// envelope's full level: in the attack, or held at full level, the LFO only ever takes level
    /// away (a tremolo of 6 dB at full level dips 6 dB and comes back to 0 dB). By
    /// `ModulationRules.sfz` it moves the level both ways, as sfizz's does.
    public var modulationLFOToVolumeDecibels: Double
    /// The vibrato LFO and its depth (SoundFont `vibLfoToPitch`, SFZ `pitchlfo_depth`), in cents
    /// at its peak.
    public var vibratoLFO: ModulationLFO
    public var vibratoLFOToPitchCents: Double
    /// An LFO of the cutoff's own and its depth in cents at its peak (SFZ's `fillfo`), by
    /// `ModulationRules.sfz` only.
    public var filterLFO = ModulationLFO()
    public var filterLFOToCutoffCents = 0.0
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
