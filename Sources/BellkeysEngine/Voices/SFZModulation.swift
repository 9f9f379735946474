import BellkeysModel

// The modulation sources by `ModulationRules.sfz`: sfizz's envelopes (`ADSREnvelope`) stepped
// frame by frame, and its LFOs (`LFO`) computed from the frames since their delay. A tick steps
// the envelopes through its frames, so their stages end on sfizz's frames, and reads each
// source where what it moves is best held or aimed: the cutoff at the tick's first frame (sfizz
// reads a filter's cutoff at the first frame of every 16), the pitch at its middle (it holds
// through the tick, where sfizz's moves frame by frame), the level at its end (the tremolo runs
// in a line to it over the tick).

/// A region's sources by sfizz's rules (`RegionTable.sfzModulations`, region for region; its
/// depths are in `ModulationTicks`, all but the filter LFO's, which is here): the envelope the
/// pitch follows (and the cutoff, unless `separateCutoffEnvelope`: then `cutoffEnvelope`), the
/// LFOs, and the share of the way to its cutoff's coefficients a filter goes in a tick (sfizz's
/// smoother: 1 − e^(−frames / (1 ms × rate))).
struct SFZModulationRates {
    var pitchEnvelope = SFZEnvelopeRates()
    var cutoffEnvelope = SFZEnvelopeRates()
    var separateCutoffEnvelope = false
    var modulationLFO = SFZLFORates()
    var vibratoLFO = SFZLFORates()
    var filterLFO = SFZLFORates()
    var filterLFOToCutoffCents = 0.0
    var filterSmoothing: Float = 1

    init() {}

    init(_ m: VoiceModulation, sampleRate: Int) {
        pitchEnvelope = SFZEnvelopeRates(m.envelope, sampleRate: sampleRate)
        if let own = m.cutoffEnvelope {
            cutoffEnvelope = SFZEnvelopeRates(own, sampleRate: sampleRate)
            separateCutoffEnvelope = true
        }
        modulationLFO = SFZLFORates(m.modulationLFO, sampleRate: sampleRate)
        vibratoLFO = SFZLFORates(m.vibratoLFO, sampleRate: sampleRate)
        filterLFO = SFZLFORates(m.filterLFO, sampleRate: sampleRate)
        filterLFOToCutoffCents = m.filterLFOToCutoffCents
        let frames = Double(ModulationTicks.sfzFrames), rate = Double(sampleRate)
        filterSmoothing = Float(1 - exp2(-frames / (0.001 * rate) * 1.442_695_040_888_963_4))
    }
}

/// What a voice by sfizz's rules adds to a modulated one (`VoicePool.sfzVoices`, slot for
/// slot): where its envelopes are, and the coefficients of the cutoff last made (its filter
/// nears them tick by tick: `ModulatedVoice.filterTarget` is the tick's step toward them).
/// Plain values. Thread: render.
struct SFZVoice {
    var pitchEnvelope = SFZEnvelopeProgress()
    var cutoffEnvelope = SFZEnvelopeProgress()
    var filterAim = SIMD8<Float>()

    @_noLocks
    init() {}

    /// A voice starting on region rates `r`: its envelopes in their delay.
    @_noLocks
    init(_ r: SFZModulationRates) {
        pitchEnvelope = SFZEnvelopeProgress(r.pitchEnvelope)
        cutoffEnvelope = SFZEnvelopeProgress(r.cutoffEnvelope)
    }
}

/// An SFZ LFO as the render thread computes it (sfizz's `LFO` settings): `wave` (an `LFOWave`
/// raw value) at the phase `phaseStep` a frame gives from `delay` frames, faded in by
/// `fadeStep` a frame (0: none).
struct SFZLFORates {
    var delay = 0
    var phaseStep = 0.0
    var fadeStep = 0.0
    var wave = 0

    init() {}

    /// sfizz's arithmetic (`LFO::start`): the delay rounded up to a whole frame.
    init(_ lfo: ModulationLFO, sampleRate: Int) {
        let rate = Double(sampleRate)
        // (In single precision, as sfizz rounds it: 0.3 s is 14,401 frames at 48 kHz.)
        delay = lfo.delay > 0 ? Int((Float(rate) * Float(lfo.delay)).rounded(.up)) : 0
        phaseStep = max(0, lfo.frequency) / rate
        fadeStep = lfo.fade > 0 ? 1 / (rate * lfo.fade) : 0
        wave = lfo.wave.rawValue
    }
}

/// An SFZ envelope's stages as the render thread steps them, frame by frame (sfizz's
/// `ADSREnvelope::updateValues`): frames of delay and hold, the attack's step a frame, the
/// decay's and release's factors a frame (e^−9 over their time, at least 6 ms; 0 for a time of
/// 0), the sustain, and the frames of the closing line (50 ms).
struct SFZEnvelopeRates {
    var delay = 0
    var start = 0.0
    var attackStep = 1.0
    var hold = 0
    var decayRate = 0.0
    var sustain = 1.0
    var releaseRate = 0.0
    var fadeFrames = 1.0
    /// The factors over an SFZ tick's frames (`ModulationTicks.sfzFrames`) and over its first
    /// half and one (to its middle frame), for a tick wholly in the decay or the release.
    var decayTick = 0.0, decayHalf = 0.0, releaseTick = 0.0, releaseHalf = 0.0

    init() {}

    init(_ e: ModulationEnvelope, sampleRate: Int) {
        let rate = Double(sampleRate)
        // (In single precision, as sfizz counts them: 0.071 s is 3,408 frames at 48 kHz, not 3,407.)
        func frames(_ t: Double) -> Int { t <= 0 ? 0 : Int(Float(t) * Float(rate)) }
        func factor(_ t: Double) -> Double {
            t <= 0 ? 0 : exp2(-9 * 1.442_695_040_888_963_4 / (max(t, 0.006) * rate)) // e^−9/frames
        }
        delay = frames(e.delay)
        start = max(0, min(1, e.start))
        attackStep = e.attack <= 0 ? 1 : 1 / (rate * e.attack)
        hold = frames(e.hold)
        decayRate = factor(e.decay)
        sustain = max(0, min(1, e.sustain))
        releaseRate = factor(e.release)
        fadeFrames = rate * 0.05
        func power(_ x: Double, _ n: Int) -> Double { (0..<n).reduce(1) { p, _ in p * x } }
        let frames = ModulationTicks.sfzFrames
        (decayTick, decayHalf) = (power(decayRate, frames), power(decayRate, frames / 2 + 1))
        (releaseTick, releaseHalf) = (power(releaseRate, frames), power(releaseRate, frames / 2 + 1))
    }
}

/// Where an SFZ envelope is (`SFZVoice.pitchEnvelope`, `cutoffEnvelope`). Plain values.
/// Thread: render.
struct SFZEnvelopeProgress {
    var stage = ModulationStage.delay
    /// Frames left in the delay or the hold.
    var left = 0
    var level = 0.0
    /// The closing line's fall a frame.
    var fadeStep = 0.0
    /// A note-off came in the delay: the release starts from `start` when the delay ends.
    var releasePending = false

    @_noLocks
    init() {}

    @_noLocks
    init(_ r: SFZEnvelopeRates) {
        left = r.delay
        level = r.start
    }

    /// Note-off: the release starts from the level reached, whatever the stage (after the
    /// delay, from where it ends). Thread: render.
    @_noLocks
    mutating func release() {
        if stage.is(.delay) {
            releasePending = true
        } else if stage.is(.attack) || stage.is(.hold) || stage.is(.decay) || stage.is(.sustain) {
            stage = .release
        }
    }

    /// The envelope's value at its next frame, stepped one frame on (sfizz's
    /// `ADSREnvelope::getBlockInternal`, in double precision). A sustain of 0 releases once the
    /// decay falls to 0.001 (sfizz: at the end of the block where it does). Thread: render.
    @_noLocks
    mutating func next(_ r: SFZEnvelopeRates) -> Double {
        while true {
            switch stage {
            case .delay:
                if left > 0 {
                    left -= 1
                    return r.start
                }
                level = r.start
                stage = releasePending ? .release : .attack
            case .attack:
                level += r.attackStep
                if level < 1 { return level }
                level = 1
                stage = .hold
                left = r.hold
            case .hold:
                if left > 0 {
                    left -= 1
                    return 1
                }
                stage = .decay
            case .decay:
                let v = level * r.decayRate
                if v > r.sustain, r.sustain > 0 || v > 0.001 {
                    level = v
                    return v
                }
                level = r.sustain > 0 ? r.sustain : v
                stage = .sustain
            case .sustain:
                // At or below 0.32 % it releases by itself (sfizz's free-running sustain).
                if r.sustain > 0.0032 { return level }
                stage = .release
            case .release:
                let v = level * r.releaseRate
                if v > 1e-4 {
                    level = v
                    return v
                }
                fadeStep = max(1e-4, level) / r.fadeFrames
                stage = .fadeout
            case .fadeout:
                level -= fadeStep
                if level > 0 { return level }
                level = 0
                stage = .finished
            case .finished:
                return 0
            }
        }
    }

    /// The values at the tick's first frame (for the cutoff: sfizz reads it there) and at its
    /// middle (for the pitch, held through the tick: a sweep is then neither early nor late),
    /// the envelope stepped through the tick's `frames`. Thread: render.
    @_noLocks
    mutating func tick(_ r: SFZEnvelopeRates, frames: Int) -> (first: Double, middle: Double) {
        // A tick wholly within one stage (its last frame still in it: each stage moves one way)
        // in one step: the level's arithmetic, frame by frame, as powers.
        let half = Double(frames / 2 + 1)
        if stage.is(.sustain), r.sustain > 0.0032 {
            return (level, level)
        } else if stage.is(.finished) {
            return (0, 0)
        } else if stage.is(.delay), left >= frames {
            left -= frames
            return (r.start, r.start)
        } else if stage.is(.hold), left >= frames {
            left -= frames
            return (1, 1)
        } else if stage.is(.fadeout), level - Double(frames) * fadeStep > 0 {
            let first = level - fadeStep, middle = level - half * fadeStep
            level -= Double(frames) * fadeStep
            return (first, middle)
        } else if stage.is(.decay), frames == 16 { // (ModulationTicks.sfzFrames: decayTick's)
            let end = level * r.decayTick
            if end > r.sustain, r.sustain > 0 || end > 0.001 {
                let first = level * r.decayRate, middle = level * r.decayHalf
                level = end
                return (first, middle)
            }
        } else if stage.is(.release), frames == 16 { // (ModulationTicks.sfzFrames)
            let end = level * r.releaseTick
            if end > 1e-4 {
                let first = level * r.releaseRate, middle = level * r.releaseHalf
                level = end
                return (first, middle)
            }
        } else if stage.is(.attack) {
            let end = level + Double(frames) * r.attackStep
            if end < 1 {
                let first = level + r.attackStep, middle = level + half * r.attackStep
                level = end
                return (first, middle)
            }
        }
        let first = next(r)
        var middle = first
        var i = 1
        while i < frames {
            let v = next(r)
            if i == frames / 2 { middle = v }
            i += 1
        }
        return (first, middle)
    }
}

/// An SFZ LFO's value `age` frames into its voice (sfizz's `LFO::process`): 0 in its delay;
/// then its wave at the phase the frames since give, faded in over its fade. Thread: render.
@_noLocks
func sfzLFO(_ l: SFZLFORates, age: Int) -> Double {
    let k = age - l.delay
    if k < 0 { return 0 }
    let x = Double(k) * l.phaseStep
    let phase = x - Double(Int(x)) // (x ≥ 0)
    let fade = l.fadeStep > 0 ? min(1, Double(k) * l.fadeStep) : 1
    return fade * lfoWave(l.wave, phase)
}

/// `wave` (an `LFOWave` raw value) at phase `p` in 0..<1, as sfizz computes it. Thread: render.
@_noLocks
func lfoWave(_ wave: Int, _ p: Double) -> Double {
    switch wave {
    case 1:
        let x = 2 * p - 1
        return -4 * x * (1 - abs(x))
    case 2: return p < 0.75 ? 1 : 0
    case 3: return p < 0.5 ? 1 : 0
    case 4: return p < 0.25 ? 1 : 0
    case 5: return p < 0.125 ? 1 : 0
    case 6: return 2 * p - 1
    case 7: return 1 - 2 * p
    default: return p < 0.25 ? 4 * p : p < 0.75 ? 2 - 4 * p : 4 * p - 4
    }
}
