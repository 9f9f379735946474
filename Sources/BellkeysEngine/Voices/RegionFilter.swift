// A region's low-pass (SFZ `fil_type`, `cutoff`, `resonance`, `fil_veltrack`, `fil_keytrack`):
// its coefficients, fixed when the voice starts, and the filter over a pitched voice's block.

extension Engine {
    /// Sets a starting voice's filter from its region `r`, key and velocity: the cutoff ×
    /// 2^((veltrack × velocity/127 + keytrack × (key − centre) + its note-on modulators' cents)
    /// / 1200), kept below 0.49 of the output rate (or, moved by modulators, within their
    /// bounds); its Q × their resonance. One pole: c = 1 − e^(−2π fc/fs). Two poles: the RBJ
    /// cookbook's low-pass at Q. Thread: render. Real-time safe.
    @_noLocks
    func startFilter(slot: Int, region r: Int, note: Int, velocity: Int, _ sums: NoteOnSums) {
        let region = table.regions[r]
        let rate = Double(configuration.sampleRate)
        let (cutoff, tracked, q) = filterSettings(region: r, note: note, velocity: velocity, sums)
        pool.pitchedVoices[slot].filterKind = region.filterKind
        pool.pitchedVoices[slot].filterState = SIMD4()
        if region.filterKind == 1 {
            let w = 2 * 3.141_592_653_589_793 * max(cutoff, 1) / rate
            pool.pitchedVoices[slot].filterCoefficients = SIMD8(
                Float(1 - exp2Fast(-w * 1.442_695_040_888_963_4)), 0, 0, 0, 0, 0, 0, 0)
            return
        }
        pool.pitchedVoices[slot].filterCoefficients = lowPassCoefficients(cutoff: cutoff, q: q, sampleRate: rate)
        if pool.pitchedVoices[slot].isModulated {
            pool.modulatedVoices[slot].cutoff = tracked
            pool.modulatedVoices[slot].filterQ = q
        }
    }

    /// The cutoff (Hz) a voice of region `r` on `note` at `velocity` starts with, kept within
    /// its bounds, the cutoff before that (`tracked`), and its Q (`startFilter`). Thread:
    /// render. Real-time safe.
    @_noLocks
    func filterSettings(region r: Int, note: Int, velocity: Int, _ sums: NoteOnSums) -> (
        cutoff: Double, tracked: Double, q: Double
    ) {
        let region = table.regions[r]
        let cents =
            region.filterVelocityCents * Double(velocity) / 127
            + region.filterKeytrackCents * Double(note - region.pitchKeycenter) + sums.cutoffCents
        let tracked = region.cutoff * exp2Fast(cents / 1200)
        var cutoff = min(tracked, 0.49 * Double(configuration.sampleRate))
        var q = region.filterQ
        if region.modulatorCount > 0 {
            let bounds = table.noteModulators.bounds[r]
            cutoff = max(bounds.lowestCutoff, min(bounds.highestCutoff, tracked))
            q *= exp2Fast(sums.resonanceDecibels * (3.321_928_094_887_362_3 / 20))
        }
        return (cutoff, tracked, q)
    }
}

/// The RBJ cookbook's two-pole low-pass at `cutoff` Hz and `q`, normalised (b0, b1, b2, a1, a2),
/// for `filterVoice`. Thread: any. Real-time safe.
@_noLocks
func lowPassCoefficients(cutoff: Double, q: Double, sampleRate rate: Double) -> SIMD8<Float> {
    let w = 2 * 3.141_592_653_589_793 * max(cutoff, 1) / rate
    let (s, c) = sineCosine(w / 2) // half angle: w is below π
    let sine = 2 * s * c, cosine = c * c - s * s
    let alpha = sine / (2 * q)
    let a0 = 1 + alpha
    let b0 = (1 - cosine) / 2 / a0
    return SIMD8(Float(b0), Float(2 * b0), Float(b0), Float(-2 * cosine / a0), Float((1 - alpha) / a0), 0, 0, 0)
}

/// Filters `n` frames of a modulated voice's read-out in place: while its coefficients move
/// (`ModulatedVoice.filterStepsLeft`), the biquad a frame at a time, each frame's coefficients a
/// step on from the last's (FluidSynth's `fluid_iir_filter_apply` moves its own so; the last
/// step lands on the new coefficients, which 64 steps in single precision would miss by up to
/// 1e-5), then as `filterVoice`. Thread: render. Real-time safe.
@_noLocks
func filterModulatedVoice(
    _ voice: inout PitchedVoice, _ modulated: inout ModulatedVoice, _ left: UnsafeMutablePointer<Float>,
    _ right: UnsafeMutablePointer<Float>, frameCount n: Int
) {
    let moving = min(n, modulated.filterStepsLeft)
    if moving > 0 {
        let z = voice.filterState
        var (l1, l2, r1, r2) = (z[0], z[1], z[2], z[3])
        var k = voice.filterCoefficients
        rampBiquad(left, frameCount: moving, &k, modulated.filterSteps, &l1, &l2)
        if voice.isStereo {
            k = voice.filterCoefficients
            rampBiquad(right, frameCount: moving, &k, modulated.filterSteps, &r1, &r2)
        }
        modulated.filterStepsLeft -= moving
        voice.filterCoefficients = modulated.filterStepsLeft == 0 ? modulated.filterTarget : k
        voice.filterState = SIMD4(l1, l2, r1, r2)
    }
    if moving < n { filterVoice(&voice, left + moving, right + moving, frameCount: n - moving) }
}

/// The biquad over `n` frames of `x` in place, its coefficients `k` (b0, b1, b2, a1, a2) moving
/// by `step` after each frame; its state `z1`, `z2`. Thread: render. Real-time safe.
@_noLocks
@inline(__always)
func rampBiquad(
    _ x: UnsafeMutablePointer<Float>, frameCount n: Int, _ k: inout SIMD8<Float>, _ step: SIMD8<Float>,
    _ z1: inout Float, _ z2: inout Float
) {
    for j in 0..<n {
        let input = x[j]
        let y = k[0] * input + z1
        z1 = flush(k[1] * input - k[3] * y + z2)
        z2 = flush(k[2] * input - k[4] * y)
        x[j] = y
        k += step
    }
}

/// Filters `n` frames of a voice's read-out in place (kind 1: one pole; 2: the biquad; 3: a
/// map key's velocity timbre, two one-pole stages) (the right side too for a stereo voice).
/// Thread: render. Real-time safe.
@_noLocks
func filterVoice(
    _ voice: inout PitchedVoice, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
    frameCount n: Int
) {
    let k = voice.filterCoefficients
    var z = voice.filterState
    if voice.filterKind == 3 {
        // Velocity timbre: two one-pole stages in a row (as `mixFilteredVoice`).
        let c = k[0]
        for j in 0..<n {
            z[0] = flush(z[0] + c * (left[j] - z[0]))
            z[1] = flush(z[1] + c * (z[0] - z[1]))
            left[j] = z[1]
        }
        if voice.isStereo {
            for j in 0..<n {
                z[2] = flush(z[2] + c * (right[j] - z[2]))
                z[3] = flush(z[3] + c * (z[2] - z[3]))
                right[j] = z[3]
            }
        }
    } else if voice.filterKind == 1 {
        let c = k[0]
        for j in 0..<n {
            z[0] = flush(z[0] + c * (left[j] - z[0]))
            left[j] = z[0]
        }
        if voice.isStereo {
            for j in 0..<n {
                z[2] = flush(z[2] + c * (right[j] - z[2]))
                right[j] = z[2]
            }
        }
    } else {
        // Transposed direct form II: y = b0 x + z1; z1 = b1 x − a1 y + z2; z2 = b2 x − a2 y.
        let (b0, b1, b2, a1, a2) = (k[0], k[1], k[2], k[3], k[4])
        for j in 0..<n {
            let x = left[j]
            let y = b0 * x + z[0]
            z[0] = flush(b1 * x - a1 * y + z[1])
            z[1] = flush(b2 * x - a2 * y)
            left[j] = y
        }
        if voice.isStereo {
            for j in 0..<n {
                let x = right[j]
                let y = b0 * x + z[2]
                z[2] = flush(b1 * x - a1 * y + z[3])
                z[3] = flush(b2 * x - a2 * y)
                right[j] = y
            }
        }
    }
    voice.filterState = z
}
