/// How a region's sample repeats: SFZ's `loop_mode` words, and what a SoundFont's
/// `sampleModes` become.
public enum LoopMode: String, Sendable, CaseIterable {
    /// Plays once to its end; note-off starts the release.
    case noLoop = "no_loop"
    /// Plays once to its end whatever note-off does (note-off is ignored).
    case oneShot = "one_shot"
    /// Repeats from `loopEnd` to `loopStart` until the voice ends (after its release).
    case continuous = "loop_continuous"
    /// Repeats while the key is held; after note-off it plays on past `loopEnd` to the end.
    case sustain = "loop_sustain"
}

/// The amplitude envelope of a region, in seconds (sustain: a linear level 0...1).
///
/// Attack rises linearly in amplitude from 0 to 1; decay and release fall linearly in decibels,
/// at 90 dB per `decay` (or `release`) seconds: a release from full level reaches −90 dB after
/// exactly `release` seconds, and the voice ends there. Stage lengths are rounded to whole frames.
public struct Envelope: Sendable, Equatable {
    public var delay: Double = 0
    public var attack: Double = 0
    public var hold: Double = 0
    public var decay: Double = 0
    public var sustain: Double = 1
    public var release: Double = 0.001

    public init(
        delay: Double = 0, attack: Double = 0, hold: Double = 0, decay: Double = 0, sustain: Double = 1,
        release: Double = 0.001
    ) {
        self.delay = delay
        self.attack = attack
        self.hold = hold
        self.decay = decay
        self.sustain = sustain
        self.release = release
    }

    /// The fall, in decibels, over one decay or release time.
    public static let fallDecibels = 90.0

    /// Whether the sample plays on, silent, through the delay (true), or waits and starts where
    /// the delay ends (false: a SoundFont's, as FluidSynth reads nothing of a voice in its
    /// delay; its modulation envelope and LFOs run from the note-on all the same).
    public var readsInDelay = true

    /// Whether the decay to the sustain level lasts whole 64-frame blocks, its last block's fall
    /// spread over that block (true: a SoundFont's, as FluidSynth moves its volume envelope once
    /// a block, clamps it at the sustain level, and ramps the amplitude across each block), or
    /// ends on the frame the curve reaches the level (false: SFZ's). A decay shorter than a
    /// block is then a ramp over one block, not a step.
    public var decaysInBlocks = false

    /// The times as a SoundFont gives them, for a region whose note-on modulators move them
    /// (nil otherwise): the engine adds the modulators' cents to these and counts each time in
    /// 64-frame blocks as FluidSynth does (`EnvelopeTimecents`). The seconds above are the
    /// same times, counted unmoved.
    public var timecents: EnvelopeTimecents?
}

/// An envelope's times in timecents (1200 × log₂ of seconds), before FluidSynth clips and counts
/// them: each stage's generator (hold and decay with the key's share), and the sustain as its
/// attenuation in centibels. A hold of −32,768 or less is none. Thread: any.
public struct EnvelopeTimecents: Sendable, Equatable {
    public var delay: Double
    public var attack: Double
    public var hold: Double
    public var decay: Double
    public var sustainCentibels: Double
    public var release: Double

    public init(delay: Double, attack: Double, hold: Double, decay: Double, sustainCentibels: Double, release: Double) {
        self.delay = delay
        self.attack = attack
        self.hold = hold
        self.decay = decay
        self.sustainCentibels = sustainCentibels
        self.release = release
    }
}

/// One region of an instrument: a sample, the keys and velocities it answers, the pitch it
/// plays at each key, its level, pan, envelope and loop. A note starts every region that
/// matches it. Thread: built on the control thread; the engine copies it into its own tables.
public struct Region: Sendable, Equatable {
    /// Index of the region's sample in the `SampleBank` (mono or stereo).
    public var sampleIndex: Int
    /// Keys (MIDI notes) and velocities that start it, both ends included.
    public var keyRange: ClosedRange<Int> = 0...127
    public var velocityRange: ClosedRange<Int> = 1...127
    /// The key at which the sample sounds at its recorded pitch.
    public var pitchKeycenter = 60
    /// Cents of pitch per key away from the centre (100: a semitone a key; 0: the same pitch on
    /// every key).
    public var pitchKeytrackCents = 100.0
    /// Tuning in cents, added to the key's pitch (SFZ `tune` + 100 × `transpose`).
    public var tuneCents = 0.0
    /// For a pitch played in whole cents (a SoundFont's, as FluidSynth plays it): the fraction of
    /// a cent, 0 up to 1, that its whole pitch in cents leaves above the whole cent its sample is
    /// played at. Cents a modulator adds to the pitch are cut down with it: the voice plays
    /// ⌊fraction + cents⌋ more (`NoteModulators.pitchInWholeCents`, `VoiceModulation.pitchInWholeCents`).
    public var pitchCentsFraction = 0.0
    /// Linear gain (SFZ `volume` as a gain).
    public var gain: Float = 1
    /// Position −1 (left) to 1 (right): a mono sample by the pan law (`panGains`), a stereo one
    /// as a balance (the far side turned down, the near side kept).
    public var pan = 0.0
    /// Its own send into the room it rings in, added to the channel's CC91 send and in its units
    /// (1: CC91's full send, at 127 on the square law, 128 on FluidSynth's line:
    /// `Instrument.linearReverbSend`), taken from the voice before its pan: a SoundFont zone's
    /// reverb send, as FluidSynth adds it. 0: none.
    public var reverbSend: Float = 0
    /// The left and right gains themselves, instead of `pan`'s (a mapped key's, already made
    /// by the pan law).
    public var sideGains: SIMD2<Float>?
    /// The amplitude envelope; nil: none (full level from the strike, note-off as `noteOff`).
    public var envelope: Envelope?
    /// What note-off does without an envelope.
    public var noteOff = NoteOffMode.ring
    /// With an envelope: whether note-off is ignored (the voice rings on as if struck once).
    public var ignoresNoteOff = false
    /// Gain for each velocity 0...127 (128 values); nil: the instrument's velocity curve.
    public var velocityGains: [Float]?
    /// First frame played.
    public var offset = 0
    public var loopMode = LoopMode.noLoop
    /// First and last frame of the loop (both played), for the looping modes.
    public var loopStart = 0
    public var loopEnd = 0
    /// Choke: a region of non-zero `group` starting silences the voices of every region whose
    /// `offBy` is that group (a mapped key's `chokeGroup` is both), by a 5 ms fade, or by
    /// their own release if `offReleases`.
    public var group = 0
    public var offBy = 0
    public var offReleases = false
    /// The fade of a choke, in seconds (nil: the engine's, `EngineConfiguration.fadeSeconds`).
    public var offFadeSeconds: Double?
    /// Whether it sounds on any strike, only on a strike with no other key of the channel held
    /// (`first`), or only on one with another held (`legato`).
    public var heldKeys = HeldKeysCondition.any
    /// Its own pitch-bend range (cents at the top and at the bottom of the wheel, the bottom
    /// negative to bend down), instead of the channel's (RPN 0, 200 cents by default).
    public var bendRangeCents: BendRange?
    /// Round robin: of `sequenceLength` regions on a key, this one sounds on strikes
    /// `sequencePosition`, `sequencePosition + sequenceLength`, ... (1-based) of its keys.
    public var sequenceLength = 1
    public var sequencePosition = 1
    /// Random choice: it sounds when the note's random value (one draw per note-on, 0 ..< 1,
    /// from a generator with a fixed seed) lies in `randomLow ..< randomHigh` (a high end of 1
    /// or more includes 1).
    public var randomLow = 0.0
    public var randomHigh = 1.0
    /// Keyswitch: it sounds only while the last key struck in the instrument's keyswitch range
    /// is this one.
    public var keyswitch: Int?
    /// Controllers that must lie in a range for it to sound (CC number: values, both ends included).
    public var controllerRanges: [Int: ClosedRange<Int>] = [:]
    /// A low-pass through which the voice plays (nil: none): at `cutoff` Hz, moved by
    /// `filterVelocityCents` × velocity/127 and `filterKeytrackCents` per key from the centre.
    public var filter: FilterKind?
    public var cutoff = 20_000.0
    /// The two-pole filter's resonance in dB (0: Butterworth, Q = 1/√2).
    public var resonance = 0.0
    public var filterVelocityCents = 0.0
    public var filterKeytrackCents = 0.0
    /// Started by the key's note-off (a release sample) instead of its note-on, at the
    /// note-on's velocity.
    public var triggersOnRelease = false
    /// The note whose pitch velocity timbre is reckoned from (nil: `pitchKeycenter`).
    public var timbreNote: Int?
    /// What moves its pitch and filter while it sounds: a modulation envelope and LFOs (nil:
    /// nothing but the key, the velocity and the wheel).
    public var modulation: VoiceModulation?
    /// What its voices' velocity, key and controllers change as they start, beyond the level
    /// and filter tracking above (nil: nothing).
    public var noteModulators: NoteModulators?

    public init(sampleIndex: Int) { self.sampleIndex = sampleIndex }

    /// The region of a mapped key: its one note, every velocity, its sample at its own pitch.
    public init(key: KeySettings) {
        sampleIndex = key.sampleIndex
        keyRange = key.note...key.note
        velocityRange = 0...127
        pitchKeycenter = key.note
        pitchKeytrackCents = 0
        gain = key.gain
        sideGains = SIMD2(key.leftGain, key.rightGain)
        noteOff = key.noteOff
        group = key.chokeGroup
        offBy = key.chokeGroup
        timbreNote = key.note
    }

    /// The playback ratio at `key`: `pitchKeytrackCents` × (key − centre) + `tuneCents` cents,
    /// times the sample's rate over the output's.
    public func ratio(key: Int, sampleRate: Int, outputRate: Int) -> Double {
        let cents = pitchKeytrackCents * Double(key - pitchKeycenter) + tuneCents
        return exp2(cents / 1200) * Double(sampleRate) / Double(outputRate)
    }
}

/// A pitch-bend range in cents: at the wheel's top (`up`) and its bottom (`down`, negative to
/// bend down).
public struct BendRange: Sendable, Equatable {
    public var up: Double
    public var down: Double

    public init(up: Double, down: Double) {
        self.up = up
        self.down = down
    }
}

/// When a region sounds, by the other keys held on its channel.
public enum HeldKeysCondition: Sendable {
    case any, first, legato
}

/// A region's low-pass filter: SFZ's `fil_type` words for the two bellkeys plays (a SoundFont's
/// filter is the two-pole one).
public enum FilterKind: String, Sendable, CaseIterable {
    /// One pole: 6 dB an octave (y += c (x − y)).
    case lowPass1 = "lpf_1p"
    /// Two poles: 12 dB an octave, with resonance (an RBJ biquad).
    case lowPass2 = "lpf_2p"
}

/// How closely a transposed sample is interpolated: the windowed-sinc kernel's length. Every
/// level is the same design (a Kaiser-windowed sinc, stretched for a voice played above its
/// sample's pitch so that nothing folds back below the output's Nyquist frequency); longer
/// kernels keep more of the top octave clean and cost proportionally more.
public enum InterpolationQuality: String, Sendable, CaseIterable {
    /// 8 taps.
    case fast
    /// 16 taps (the default).
    case good
    /// 32 taps.
    case best

    public static let standard = InterpolationQuality.good

    /// Kernel taps at unit stretch.
    public var taps: Int {
        switch self {
        case .fast: 8
        case .good: 16
        case .best: 32
        }
    }
}
