import BellkeysModel

// The modulation envelope and the LFOs on the render thread. They move in ticks of 64 frames
// counted from the voice's first frame; the envelope's stages are whole numbers of ticks counted
// as FluidSynth 2.3 counts them (`fluid_voice_update_param`, `calculate_hold_decay_buffers`),
// stepped by FluidSynth's rule (`fluid_adsr_env_calc`), and the LFOs step as `fluid_lfo_calc`.
// FluidSynth renders in 64-frame blocks and starts a voice on a block, so its modulation moves
// at the same frames of the voice: a voice's pitch and cutoff follow FluidSynth's tick for
// tick, whatever blocks bellkeys renders in.

/// A region's modulation in ticks, as the render thread reads it (`RegionSlot.modulation`).
struct ModulationTicks {
    /// Frames in a tick: FluidSynth's block.
    static let frames = 64
    /// Frames in an SFZ region's tick (`ModulationRules.sfz`): sfizz moves a filter's cutoff
    /// every 16 frames.
    static let sfzFrames = 16

    /// Ticks of each stage; the steps of the attack (up), decay and release (down), as the
    /// change in level per tick; the sustain level.
    var delay = 0
    var attack = 1
    var attackStep = 1.0
    var hold = 0
    var decay = 0
    var decayStep = 0.0
    var sustain = 1.0
    var release = 1
    var releaseStep = -1.0
    /// Cents of pitch and of the filter's cutoff at full level, and where the cutoff stays (Hz).
    var toPitchCents = 0.0
    var toCutoffCents = 0.0
    var lowestCutoff = 0.0
    var highestCutoff = 0.0
    /// The LFOs: the frame of the voice from which each moves, its step a tick, its depths.
    var modulationLFO = LFOTicks()
    var vibratoLFO = LFOTicks()
    var modulationLFOToPitchCents = 0.0
    var modulationLFOToCutoffCents = 0.0
    var vibratoLFOToPitchCents = 0.0
    /// Centibels of level at the modulation LFO's peak (positive: louder), −960...960.
    var modulationLFOToVolumeCentibels = 0.0
    /// Whether the pitch's cents are cut down to a whole cent (`VoiceModulation.pitchInWholeCents`).
    var wholeCents = false
    /// Whether it follows sfizz (`ModulationRules.sfz`: its envelopes, its LFOs and the filter
    /// LFO's depth are `RegionTable.sfzModulations`', kept apart so that this stays as small as
    /// a SoundFont's needs: it is copied at every tick).
    var sfz = false

    /// Its frames a tick.
    var tickFrames: Int {
        @_noLocks get { sfz ? Self.sfzFrames : Self.frames }
    }

    init() {}

    /// `modulation` at `sampleRate` frames a second. FluidSynth's own arithmetic: a delay's
    /// ticks are cut down to a whole tick, an attack's and a release's are one more than that,
    /// a hold's and a decay's are rounded; a step is 1 over the ticks in single precision.
    init(_ modulation: VoiceModulation, sampleRate: Int) {
        let e = modulation.envelope, rate = Double(sampleRate), tick = Double(Self.frames)
        func cut(_ seconds: Double) -> Int { Int(max(0, rate * seconds / tick)) }
        func rounded(_ seconds: Double) -> Int { Int(max(0, rate * seconds / tick + 0.5)) }
        func step(_ ticks: Int) -> Double { Double(Float(1) / Float(ticks)) }
        delay = cut(e.delay)
        attack = 1 + cut(e.attack)
        attackStep = step(attack)
        hold = rounded(e.hold)
        decay = rounded(e.decay)
        decayStep = decay > 0 ? -step(decay) : 0
        sustain = max(0, min(1, e.sustain))
        release = 1 + cut(e.release)
        releaseStep = -step(release)
        // (The depths as the region gives them: a voice holds them, with its note-on
        // modulators', within FluidSynth's bounds at its first tick.)
        toPitchCents = modulation.envelopeToPitchCents
        toCutoffCents = modulation.envelopeToCutoffCents
        lowestCutoff = modulation.cutoffRange.lowerBound
        highestCutoff = min(modulation.cutoffRange.upperBound, 0.45 * rate)
        modulationLFO = LFOTicks(modulation.modulationLFO, sampleRate: sampleRate)
        vibratoLFO = LFOTicks(modulation.vibratoLFO, sampleRate: sampleRate)
        modulationLFOToPitchCents = modulation.modulationLFOToPitchCents
        modulationLFOToCutoffCents = modulation.modulationLFOToCutoffCents
        vibratoLFOToPitchCents = modulation.vibratoLFOToPitchCents
        modulationLFOToVolumeCentibels = 10 * modulation.modulationLFOToVolumeDecibels
        wholeCents = modulation.pitchInWholeCents
        sfz = modulation.rules == .sfz
    }
}

extension Engine {
    /// `region`'s modulation with its envelope's stages counted again from `t`: delay, attack,
    /// hold, decay and release in timecents (the region's and its note-on modulators' summed),
    /// the sustain in tenths of a percent. FluidSynth's arithmetic (`fluid_voice_update_param`,
    /// `calculate_hold_decay_buffers`), as `ModulationTicks.init` counts the region's seconds:
    /// each time clipped (a hold of −32,768 or less is none), the delay cut down, the attack and
    /// the release cut down plus one, the hold and the decay rounded. Thread: render. Real-time
    /// safe.
    @_noLocks
    func countedModulation(_ region: ModulationTicks, _ t: SIMD8<Double>) -> ModulationTicks {
        let rate = Double(configuration.sampleRate)
        func ticks(_ timecents: Double, _ high: Double) -> Double {
            rate * exp2Fast(max(-12_000, min(high, timecents)) / 1200) / 64
        }
        func step(_ count: Int) -> Double { Double(Float(1) / Float(count)) }
        var m = region
        m.delay = Int(ticks(t[0], 5_000))
        m.attack = 1 + Int(ticks(t[1], 8_000))
        m.attackStep = step(m.attack)
        m.hold = t[2] <= -32_768 ? 0 : Int(ticks(t[2], 5_000) + 0.5)
        m.decay = Int(ticks(t[3], 8_000) + 0.5)
        m.decayStep = m.decay > 0 ? -step(m.decay) : 0
        m.sustain = max(0, min(1, 1 - Double(Float(0.001)) * t[4]))
        m.release = 1 + Int(ticks(t[5], 8_000))
        m.releaseStep = -step(m.release)
        return m
    }
}

/// An LFO as the render thread steps it (FluidSynth's `fluid_lfo_t` settings): it moves at the
/// ticks that begin at or after `delay` frames of the voice, by `step` (4 × 64 × frequency /
/// rate: a quarter period is 1 / (4 × frequency) s).
struct LFOTicks {
    var delay = 0
    var step = 0.0

    init() {}

    /// FluidSynth's arithmetic: the delay cut down to a whole frame.
    init(_ lfo: ModulationLFO, sampleRate: Int) {
        delay = Int(max(0, Double(sampleRate) * lfo.delay))
        step = 4 * Double(ModulationTicks.frames) * max(0, lfo.frequency) / Double(sampleRate)
    }
}

/// One tick of an LFO at `value` moving by `step` (its sign the direction), for a voice `age`
/// frames old at the tick's start (FluidSynth's `fluid_lfo_calc`): nothing before its delay,
/// then a step, reflected at ±1. Thread: render.
@_noLocks
func stepLFO(_ value: inout Double, _ step: inout Double, age: Int, delay: Int) {
    if age < delay { return }
    value += step
    if value > 1 {
        step = -step
        value = 2 - value
    } else if value < -1 {
        step = -step
        value = -2 - value
    }
}

/// Where a modulation envelope is.
enum ModulationStage: UInt8 {
    case delay, attack, hold, decay, sustain, release, finished
    /// sfizz's closing line after a release (`SFZEnvelopeProgress`).
    case fadeout

    /// Whether this is `stage` (not `==`: see `VoicePhase.is`).
    @_noLocks
    func `is`(_ stage: ModulationStage) -> Bool { rawValue == stage.rawValue }
}

/// The lanes of a modulated voice's depths (`ModulatedVoice.depths`): cents of pitch and cutoff
/// at the envelope's full level, at the modulation LFO's peak, cents of pitch at the vibrato
/// LFO's, centibels of level at the modulation LFO's, cents of cutoff at the filter LFO's. (The
/// render thread writes them as literals.)
enum ModulatedDepth {
    static let envelopeToPitch: UInt8 = 0
    static let envelopeToCutoff: UInt8 = 1
    static let modulationLFOToPitch: UInt8 = 2
    static let modulationLFOToCutoff: UInt8 = 3
    static let vibratoLFOToPitch: UInt8 = 4
    static let modulationLFOToVolume: UInt8 = 5
    static let filterLFOToCutoff: UInt8 = 6
}

/// What a modulated voice adds to a pitched one (`VoicePool.modulatedVoices`, slot for slot):
/// its envelope's place and level, its LFOs, the two factors of its pitch, its filter's move and
/// its tremolo's.
/// Plain values. Thread: render.
struct ModulatedVoice {
    var stage = ModulationStage.delay
    /// Ticks into the stage.
    var count = 0
    /// The envelope's level, 0...1.
    var level = 0.0
    /// Frames left in the tick under way (0: the next frame begins a tick).
    var tickLeft = 0
    /// Note-off came: the release starts at the next tick (FluidSynth starts it at a block).
    var releaseAsked = false
    /// The wheel's factor on its increment (`Engine.retune` keeps it), and the envelope's (set
    /// at each tick).
    var bend = 1.0
    var pitchFactor = 1.0
    /// Its filter's cutoff and Q at note-on (Hz; `startFilter`), the cutoff its coefficients were last
    /// made for (-1: none yet: the first are set at once), and their move toward those
    /// (`filterTarget`): `filterSteps` a frame for `filterStepsLeft` frames more, landing on them.
    var cutoff = 0.0
    var filterQ = 0.0
    var lastCutoff = -1.0
    var filterTarget = SIMD8<Float>()
    var filterSteps = SIMD8<Float>()
    var filterStepsLeft = 0
    /// Ticks begun, and the LFOs' values and steps (negative while falling).
    var ticks = 0
    var modulationLFO = 0.0
    var modulationLFOStep = 0.0
    var vibratoLFO = 0.0
    var vibratoLFOStep = 0.0

    /// The tremolo's factor on the level as the tick under way ends, and its step a frame: it
    /// moves in a line from the last tick's factor to this one's over the tick, as FluidSynth
    /// ramps its amplitude over a block.
    var tremoloTarget: Float = 1
    var tremoloStep: Float = 0
    /// Whether its pitch moves, whether its cutoff does, and whether it has a tremolo (set at
    /// its first tick).
    var movesPitch = false
    var movesCutoff = false
    var hasTremolo = false
    /// Its sources' depths, by `ModulatedDepth` lane: until its first tick what its note-on
    /// modulators add to its region's (`startVoice`), from then the sums, held within
    /// FluidSynth's bounds.
    var depths = SIMD8<Double>()
    /// Whether its modulation envelope's stages are its own (`VoicePool.voiceModulations[slot]`:
    /// its note-on modulators moved their times), not its region's.
    var ownsTicks = false
    /// For a pitch in whole cents: the fraction of a cent its pitch leaves above the whole cent
    /// it plays at (`NoteOnSums.pitchFraction`), which its modulation's cents are cut down with.
    var pitchFraction = 0.0
    /// Its level from its modulators as it started (`NoteOnSums.levelFactor`), and the factor
    /// on that their live sources have moved it by since (its tremolo carries it); whether
    /// they moved its filter's Q, whose coefficients its next tick makes again.
    var startLevel: Float = 1
    var liveLevel: Float = 1
    var filterMoved = false
    /// Whether it only counts its ticks: its region may idle (`RegionSlot.mayIdle`) and its
    /// depths are all 0 (its modulation moves nothing). A live source that gives it a depth
    /// wakes it (`Engine.wake`), its ticks and LFOs where they would have been: counted from
    /// `startFrame`, the engine's frame at its first (an idle voice's ticks cost nothing).
    var idle = false
    var startFrame: Int64 = 0

    @_noLocks
    init() {}
}

/// The SoundFont convex curve at 128 points (FluidSynth's `fluid_convex_tab`): 0 at 0, 1 at 127,
/// 1 + 5/12 log₁₀(i / 127) between. Thread: control.
func convexCurve() -> [Double] {
    let log10Of2 = 0.301_029_995_663_981_2
    var curve = [Double](repeating: 0, count: 128)
    for i in 1..<127 {
        let x = log2(Double(i) / 127) * log10Of2
        curve[i] = 1 + 5 / 12 * x
    }
    curve[127] = 1
    return curve
}

/// The curve at `x` in 0...127, between its points linearly (FluidSynth's `fluid_convex`).
@_noLocks
func convex(_ x: Double, curve: UnsafePointer<Double>) -> Double {
    if x < 0 { return 0 }
    let i = Int(x)
    if i >= 127 { return curve[127] }
    return curve[i] + (curve[i + 1] - curve[i]) * (x - Double(i))
}

/// The level a modulated voice's pitch follows: in the attack, the envelope's through the convex
/// curve (as FluidSynth reads it), else the envelope's own.
@_noLocks
func heardLevel(_ v: ModulatedVoice, curve: UnsafePointer<Double>) -> Double {
    v.stage.is(.attack) ? convex(127 * v.level, curve: curve) : v.level
}

/// One tick of a modulation envelope (FluidSynth's `fluid_adsr_env_calc`), after a note-off
/// asked for since the last (`fluid_rvoice_noteoff_LOCAL`): on to the next stage while this
/// one's ticks are used up (leaving the decay at the sustain level), then one step, which ends
/// the stage early when it passes the stage's bound. Thread: render.
@_noLocks
func stepModulation(_ v: inout ModulatedVoice, _ t: ModulationTicks, curve: UnsafePointer<Double>) {
    if v.releaseAsked {
        v.releaseAsked = false
        if v.stage.is(.delay) || v.stage.is(.attack) || v.stage.is(.hold) || v.stage.is(.decay)
            || v.stage.is(.sustain)
        {
            // The release falls from the level heard: in the attack that is the curve's.
            if v.stage.is(.attack), v.level > 0 { v.level = max(0, min(1, convex(127 * v.level, curve: curve))) }
            v.stage = .release
            v.count = 0
        }
    }
    while v.count >= ticks(of: v.stage, t) {
        if v.stage.is(.decay) { v.level = t.sustain }
        v.stage = ModulationStage(rawValue: v.stage.rawValue + 1) ?? .finished
        v.count = 0
    }
    let (step, low, high) = bounds(of: v.stage, t)
    var x = v.stage.is(.delay) || v.stage.is(.finished) ? 0 : v.level + step
    if x < low {
        x = low
        v.stage = ModulationStage(rawValue: v.stage.rawValue + 1) ?? .finished
        v.count = 0
    } else if x > high {
        x = high
        v.stage = ModulationStage(rawValue: v.stage.rawValue + 1) ?? .finished
        v.count = 0
    } else {
        v.count += 1
    }
    v.level = x
}

/// The ticks of `stage` (the sustain and the end last for ever).
@_noLocks
private func ticks(of stage: ModulationStage, _ t: ModulationTicks) -> Int {
    switch stage {
    case .delay: t.delay
    case .attack: t.attack
    case .hold: t.hold
    case .decay: t.decay
    case .sustain, .finished, .fadeout: Int.max
    case .release: t.release
    }
}

/// A stage's step and the bounds that end it (FluidSynth's `increment`, `min`, `max`).
@_noLocks
private func bounds(of stage: ModulationStage, _ t: ModulationTicks) -> (step: Double, low: Double, high: Double) {
    switch stage {
    case .delay, .finished, .fadeout: (0, -1, 1)
    case .attack: (t.attackStep, -1, 1)
    case .hold, .sustain: (0, -1, 2)
    case .decay: (t.decayStep, t.sustain, 2)
    case .release: (t.releaseStep, 0, 2)
    }
}
