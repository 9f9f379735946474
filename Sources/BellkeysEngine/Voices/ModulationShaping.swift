import BellkeysModel

// What a modulated voice's read frames go through after the kernel: its filter, its
// coefficients moving over a tick that moves them, and its tremolo, tick by tick
// (`ModulationState.swift` steps the sources at each tick).

extension Engine {
    /// A modulated voice's `n` read frames through its filter (its coefficients moving, in a
    /// tick that moves them) and its tremolo, tick by tick: the frames of a voice whose pitch
    /// holds may run past the tick under way, and the next tick begins where it ends. `gain` is
    /// where its volume envelope's piece under way heads. Thread: render.
    @_noLocks
    func shapeModulatedVoice(
        slot: Int, region: Int, _ pitched: inout PitchedVoice, gain: Float, _ left: UnsafeMutablePointer<Float>,
        _ right: UnsafeMutablePointer<Float>, frameCount n: Int
    ) {
        var at = 0
        while at < n {
            if pool.modulatedVoices[slot].tickLeft == 0 {
                tickModulation(slot: slot, region: region, &pitched, gain: gain)
            }
            let k = min(n - at, pool.modulatedVoices[slot].tickLeft)
            if pool.modulatedVoices[slot].filterStepsLeft > 0 {
                filterModulatedVoice(&pitched, &pool.modulatedVoices[slot], left + at, right + at, frameCount: k)
            } else if pitched.filterKind != 0 {
                filterVoice(&pitched, left + at, right + at, frameCount: k)
            }
            if pool.modulatedVoices[slot].hasTremolo {
                applyTremolo(
                    pool.modulatedVoices[slot], left + at, pitched.isStereo ? right + at : nil, frameCount: k)
            }
            pool.modulatedVoices[slot].tickLeft -= k
            at += k
        }
    }
}

extension Engine {
    /// `n` frames of a voice whose envelope is in its delay and reads nothing there (a
    /// SoundFont's, as FluidSynth's): its envelope's piece moves on, and its modulation's ticks
    /// come as they fall, its sample's place does not. Thread: render.
    @_noLocks
    func holdInDelay(slot: Int, region: Int, _ pitched: inout PitchedVoice, gain: Float, frameCount n: Int) {
        if pitched.envelope.pieceLeft != Int.max { pitched.envelope.pieceLeft -= n }
        pitched.envelope.stageFrame += n
        guard pitched.isModulated else { return }
        var at = 0
        while at < n {
            if pool.modulatedVoices[slot].tickLeft == 0 {
                tickModulation(slot: slot, region: region, &pitched, gain: gain)
            }
            let k = min(n - at, pool.modulatedVoices[slot].tickLeft)
            pool.modulatedVoices[slot].tickLeft -= k
            at += k
        }
        // FluidSynth's filter is not computed in the delay: its first coefficients after it are
        // set at once (`filter_startup`), not reached over a tick.
        pool.modulatedVoices[slot].lastCutoff = -1
        pool.modulatedVoices[slot].filterStepsLeft = 0
    }
}

/// The tremolo's factor on a voice's level: `lfoCentibels` louder (negative: softer) than its
/// volume envelope's `gain`, but never above the envelope's full level, as FluidSynth 2.3's
/// amplitude is `cb2amp(960 (1 − env) − lfo × modLfoToVol)` and `cb2amp` holds at 1 for a
/// negative attenuation. In the attack FluidSynth leaves the envelope out of that sum (it
/// multiplies it on), so only the LFO's own louder half is held there. Thread: render.
@_noLocks
func tremolo(lfoCentibels: Double, gain: Float, _ envelope: EnvelopeState) -> Float {
    // The envelope's attenuation in centibels (200 log₁₀ of its level, at most 1,440).
    // (A voice faded out, stolen or choked, has no envelope left: the LFO only dips it.)
    var attenuation = 0.0
    if !envelope.stage.is(.attack), !envelope.stage.is(.delay), !envelope.stage.is(.none), envelope.strike > 0 {
        let level = Double(gain / envelope.strike)
        attenuation = level > 0 ? min(1_440, -200 * 0.301_029_995_663_981_2 * log2Fast(level)) : 1_440
    }
    // 10^(min(attenuation, lfo) / 200), as a power of 2.
    return Float(exp2Fast(min(attenuation, lfoCentibels) * (3.321_928_094_887_362_3 / 200)))
}

/// Multiplies `n` frames of a modulated voice's read (and filtered) frames by its tremolo, the
/// tick under way having `tickLeft` frames left at the first: each frame's factor is taken from
/// where it lies in the tick (`target − step × frames left`), so where segments split a tick
/// never changes it. Thread: render.
@_noLocks
func applyTremolo(
    _ v: ModulatedVoice, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, frameCount n: Int
) {
    let target = v.tremoloTarget, step = v.tremoloStep, framesLeft = v.tickLeft
    // Eight frames at a time: the factors of frames j...j+7.
    let lanes = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
    var j = 0
    while j + 8 <= n {
        let g = target - step * (Float(framesLeft - j) - lanes)
        let l = UnsafeMutableRawPointer(left + j)
        l.storeBytes(of: l.loadUnaligned(as: SIMD8<Float>.self) * g, as: SIMD8<Float>.self)
        if let right {
            let r = UnsafeMutableRawPointer(right + j)
            r.storeBytes(of: r.loadUnaligned(as: SIMD8<Float>.self) * g, as: SIMD8<Float>.self)
        }
        j += 8
    }
    while j < n {
        let g = target - step * Float(framesLeft - j)
        left[j] *= g
        if let right { right[j] *= g }
        j += 1
    }
}

/// A voice's modulation sources' depths, by `ModulatedDepth` lane: its region's (`t`, and
/// `filterLFOCents`, an SFZ region's `SFZModulationRates.filterLFOToCutoffCents`) and what its
/// modulators add, held within FluidSynth's bounds (12,000 cents, 960 centibels). Thread:
/// render.
@_noLocks
func heldDepths(_ t: ModulationTicks, _ added: SIMD8<Double>, filterLFOCents: Double = 0) -> SIMD8<Double> {
    let base = SIMD8<Double>(
        t.toPitchCents, t.toCutoffCents, t.modulationLFOToPitchCents, t.modulationLFOToCutoffCents,
        t.vibratoLFOToPitchCents, t.modulationLFOToVolumeCentibels, filterLFOCents, 0)
    let bound = SIMD8<Double>(12_000, 12_000, 12_000, 12_000, 12_000, 960, 12_000, 0)
    return (base + added).clamped(lowerBound: -bound, upperBound: bound)
}
