import BellkeysModel

// Modulators that read live sources (a controller, pressure, the wheel or its range): when one
// moves, every voice whose modulators read it takes their new sums, as FluidSynth re-reads a
// voice's modulators for the controller that moved (`fluid_voice_modulate`). What they move
// reaches the sound at the voice's next tick, as FluidSynth's reaches it at its next block:
// the pitch there, the filter over that tick, the level in a line over it.

extension Engine {
    /// Live source `source` (a `ModulatorTerm` code; `ModulatorTerm.none`: every source, after
    /// a reset) moved on `channel`; a key's pressure (`note` ≥ 0) moves only that key's voices.
    /// Thread: render. Real-time safe.
    @_noLocks
    func sourceMoved(channel: Int, source: Int, note: Int = -1) {
        for i in 0..<activeCount {
            let slot = Int(pool.active[i])
            guard pool.voices[slot].channel == channel, pool.voices[slot].isPitched,
                pool.pitchedVoices[slot].isModulated
            else { continue }
            if note >= 0, Int(pool.voices[slot].note) != note { continue }
            let r = Int(pool.voices[slot].region)
            guard table.regions[r].hasLiveModulators, reads(region: r, source: source) else { continue }
            remodulate(slot: slot, region: r)
        }
    }

    /// Whether a modulator of region `r` reads `source` (`ModulatorTerm.none`: any live source).
    /// Thread: render. Real-time safe.
    @_noLocks
    func reads(region r: Int, source: Int) -> Bool {
        let start = Int(table.regions[r].modulatorStart)
        for i in start..<(start + Int(table.regions[r].modulatorCount)) {
            let term = table.noteModulators.terms[i]
            if source == -3 { // ModulatorTerm.none: velocity (−1) and key (−2) never move
                if term.source >= 0 || term.source <= -4 || term.amountSource >= 0 || term.amountSource <= -4 {
                    return true
                }
            } else if term.source == source || term.amountSource == source {
                return true
            }
        }
        return false
    }

    /// A voice's modulators read again: its pitch, its filter's cutoff and Q, its level (as a
    /// factor on its level at note-on, carried by its tremolo) and its modulation sources'
    /// depths take their new sums at its next tick; an idle voice given a depth wakes. Its
    /// envelopes' times and its start stay. Thread: render. Real-time safe.
    @_noLocks
    func remodulate(slot: Int, region r: Int) {
        let voice = pool.voices[slot], key = table.regions[r]
        let channel = Int(voice.channel), note = Int(voice.note), velocity = Int(voice.velocity)
        var sums = noteOnSums(region: r, channel: channel, note: note, velocity: velocity)
        let level = noteOnLevel(&sums, region: r, velocityGain: table.velocityGains[128 * r + velocity])
        var m = pool.modulatedVoices[slot]
        let t = m.ownsTicks ? pool.voiceModulations[slot] : key.modulation
        if m.idle {
            // Its modulators move only the LFOs' depths: while those stay 0 it stays idle.
            if heldDepths(t, sums.depths) == SIMD8() { return }
            wake(&m, t)
        }
        m.liveLevel = m.startLevel > 0 ? level / m.startLevel : 1
        m.hasTremolo = m.hasTremolo || m.liveLevel != 1
        // The pitch: the region's increment for the note, moved by the new cents.
        let pitchNote = Int(table.soundsAs[128 * key.set + note])
        let base = table.increments[incrementIndex(key, pitchNote: pitchNote)]
        let increment = sums.pitchCents == 0 ? base : movedIncrement(base, cents: sums.pitchCents)
        if increment != pool.pitchedVoices[slot].baseIncrement || sums.pitchFraction != m.pitchFraction {
            pool.pitchedVoices[slot].baseIncrement = increment
            m.pitchFraction = sums.pitchFraction
            m.movesPitch = true
        }
        if key.filterKind == 2 {
            let settings = filterSettings(region: r, note: pitchNote, velocity: velocity, sums)
            if settings.tracked != m.cutoff || settings.q != m.filterQ {
                m.cutoff = settings.tracked
                m.filterQ = settings.q
                m.movesCutoff = true
                m.filterMoved = true
            }
        }
        if m.ticks == 0 {
            m.depths = sums.depths // the region's are added at the first tick
        } else {
            m.depths = heldDepths(
                t, sums.depths, filterLFOCents: t.sfz ? table.sfzModulations[r].filterLFOToCutoffCents : 0)
            m.movesPitch = m.movesPitch || m.depths[0] != 0 || m.depths[2] != 0 || m.depths[4] != 0
            m.movesCutoff = m.movesCutoff || m.depths[1] != 0 || m.depths[3] != 0 || m.depths[6] != 0
            m.hasTremolo = m.hasTremolo || m.depths[5] != 0
        }
        // Coefficients made once at note-on are moved from over a tick, not replaced at once.
        if m.movesCutoff, m.lastCutoff < 0, m.ticks > 0 { m.lastCutoff = 0 }
        pool.modulatedVoices[slot] = m
    }

    /// An idle voice (`ModulatedVoice.idle`) woken at the segment's first frame: its ticks
    /// counted from its first frame, its LFOs where stepping them at each would have left them
    /// (`lfoAfter`; before its first tick, they start there). Its modulation envelope stays
    /// where it was: it moves nothing. Thread: render.
    @_noLocks
    func wake(_ m: inout ModulatedVoice, _ t: ModulationTicks) {
        m.idle = false
        let age = max(0, Int(currentFrame - m.startFrame))
        m.ticks = (age + 63) / 64 // ticks begun (ModulationTicks.frames)
        m.tickLeft = m.ticks * 64 - age
        guard m.ticks > 0 else { return }
        (m.modulationLFO, m.modulationLFOStep) = lfoAfter(
            ticks: m.ticks, step: t.modulationLFO.step, delay: t.modulationLFO.delay)
        (m.vibratoLFO, m.vibratoLFOStep) = lfoAfter(ticks: m.ticks, step: t.vibratoLFO.step, delay: t.vibratoLFO.delay)
    }
}

/// An LFO's value and step after `ticks` ticks of a voice (`stepLFO` at each: a step at every
/// tick that begins at or after `delay` frames, from 0 rising by `step`, reflected at ±1), in
/// closed form: the triangle at (steps × step) modulo 4. Thread: render.
@_noLocks
func lfoAfter(ticks: Int, step: Double, delay: Int) -> (value: Double, step: Double) {
    let first = (delay + 63) / 64 // (ModulationTicks.frames)
    let steps = max(0, ticks - first)
    var p = Double(steps) * step
    p -= 4 * Double(Int(p / 4))
    if p <= 1 { return (p, step) }
    if p <= 3 { return (2 - p, -step) }
    return (p - 4, step)
}
