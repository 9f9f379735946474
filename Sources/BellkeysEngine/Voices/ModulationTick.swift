import BellkeysModel

// A modulated voice's tick: its sources one step on, by FluidSynth's rules or sfizz's
// (`ModulationState.swift`, `SFZModulation.swift`), and what they move: its pitch, its filter's
// cutoff and its tremolo, for the tick's frames.

/// The sources' values at a tick: the envelope levels the pitch and the cutoff follow, and the
/// LFOs'.
private struct SourceValues {
    var pitchLevel = 0.0
    var cutoffLevel = 0.0
    var modulationLFO = 0.0
    var vibratoLFO = 0.0
    var filterLFO = 0.0
}

extension Engine {
    /// A modulated voice's tick: its envelope and LFOs one step on, its pitch to their cents (with
    /// the wheel's), its filter toward their cutoff and its tremolo toward their level, for the
    /// next `ModulationTicks.frames` frames (`sfzFrames` by sfizz's rules); `gain` is where the
    /// voice's volume envelope is heading at the tick's first frame (its piece's end, as
    /// FluidSynth's amplitude for a block is its end's). Thread: render.
    @_noLocks
    func tickModulation(slot: Int, region: Int, _ pitched: inout PitchedVoice, gain: Float) {
        if pool.modulatedVoices[slot].idle {
            pool.modulatedVoices[slot].ticks += 1
            pool.modulatedVoices[slot].tickLeft = 64 // (ModulationTicks.frames: an idle voice is a SoundFont's)
            return
        }
        let ticks =
            pool.modulatedVoices[slot].ownsTicks ? pool.voiceModulations[slot] : table.regions[region].modulation
        // (In place: a copy of the voice's state, in and out, cost a memcpy a tick.)
        tick(&pool.modulatedVoices[slot], slot: slot, region: region, ticks, &pitched, gain: gain)
    }

    /// `tickModulation`'s work on the voice's state, where it lies. Thread: render.
    @_noLocks
    @inline(__always)
    private func tick(
        _ modulated: inout ModulatedVoice, slot: Int, region: Int, _ ticks: ModulationTicks,
        _ pitched: inout PitchedVoice, gain: Float
    ) {
        var values: SourceValues
        if ticks.sfz {
            if modulated.ticks == 0 {
                firstTick(&modulated, ticks, filterLFOCents: table.sfzModulations[region].filterLFOToCutoffCents)
            }
            values = stepSFZSources(slot: slot, region: region, &modulated)
        } else {
            values = stepFluidSynthSources(&modulated, ticks, curve: table.convexCurve)
        }
        modulated.tickLeft = ticks.tickFrames
        let d = modulated.depths
        if modulated.movesPitch {
            var cents = values.pitchLevel * d[0] + values.modulationLFO * d[2] + values.vibratoLFO * d[4]
            // FluidSynth cuts its voice's whole pitch down to a whole cent (`fluid_ct2hz_real`):
            // the modulation's cents with the fraction the voice's pitch leaves above its own.
            if ticks.wholeCents {
                let x = modulated.pitchFraction + cents
                var whole = Double(Int(x)) // (within ±36,000: the depths are held within 12,000)
                if whole > x { whole -= 1 }
                cents = whole
            }
            modulated.pitchFactor = exp2Fast(cents / 1200)
            tune(&pitched, factor: modulated.bend * modulated.pitchFactor)
        }
        if modulated.movesCutoff, pitched.filterKind == 2 {
            let cents = values.cutoffLevel * d[1] + values.modulationLFO * d[3] + values.filterLFO * d[6]
            moveCutoff(
                slot: slot, region: region, &modulated, &pitched, ticks,
                cutoff: modulated.cutoff * exp2Fast(cents / 1200))
        }
        if modulated.hasTremolo {
            let centibels = values.modulationLFO * d[5]
            // sfizz's is plain decibels, 10^(cB / 200) as a power of 2.
            let factor =
                (ticks.sfz
                    ? Float(exp2Fast(centibels * (3.321_928_094_887_362_3 / 200)))
                    : tremolo(lfoCentibels: centibels, gain: gain, pitched.envelope)) * modulated.liveLevel
            modulated.tremoloStep = (factor - modulated.tremoloTarget) / Float(ticks.tickFrames)
            modulated.tremoloTarget = factor
        }
    }

    /// A modulated voice's filter toward `moved` (Hz, kept within the region's bounds) over the
    /// tick, at once the first time. FluidSynth's `fluid_iir_filter_calc`: new coefficients when
    /// the cutoff moved by more than 0.01 Hz, reached in a line over the tick. By sfizz's rules,
    /// the coefficients also go through sfizz's smoother (a pole of τ = 1 ms on each): the tick
    /// aims at where it would be at the tick's end, e^(−16 / 48) of the way left at 48 kHz, and
    /// goes on until the coefficients are within 10^−7 of the cutoff's. Thread: render.
    @_noLocks
    @inline(__always)
    private func moveCutoff(
        slot: Int, region: Int, _ modulated: inout ModulatedVoice, _ pitched: inout PitchedVoice,
        _ ticks: ModulationTicks, cutoff moved: Double
    ) {
        let cutoff = max(ticks.lowestCutoff, min(ticks.highestCutoff, moved))
        var target = ticks.sfz ? pool.sfzVoices[slot].filterAim : SIMD8<Float>()
        if abs(cutoff - modulated.lastCutoff) > 0.01 || modulated.filterMoved {
            modulated.filterMoved = false
            target = lowPassCoefficients(
                cutoff: cutoff, q: modulated.filterQ, sampleRate: Double(configuration.sampleRate))
            if ticks.sfz { pool.sfzVoices[slot].filterAim = target }
            if modulated.lastCutoff < 0 {
                pitched.filterCoefficients = target
                modulated.lastCutoff = cutoff
                return
            }
            modulated.lastCutoff = cutoff
        } else if !ticks.sfz {
            return
        }
        if ticks.sfz {
            let left = target - pitched.filterCoefficients
            if (left * left).max() < 1e-14 { return }
            target = pitched.filterCoefficients + table.sfzModulations[region].filterSmoothing * left
        }
        modulated.filterTarget = target
        modulated.filterSteps = (target - pitched.filterCoefficients) / Float(ticks.tickFrames)
        modulated.filterStepsLeft = ticks.tickFrames
    }

    /// The voice's depths at its first tick: its region's and its note-on modulators' (held
    /// within FluidSynth's bounds), and which of pitch, cutoff and level they move. Thread: render.
    @_noLocks
    @inline(__always)
    private func firstTick(_ modulated: inout ModulatedVoice, _ ticks: ModulationTicks, filterLFOCents: Double = 0) {
        let d = heldDepths(ticks, modulated.depths, filterLFOCents: filterLFOCents)
        modulated.depths = d
        // (Or moved already by live sources: `remodulate`.)
        modulated.movesPitch = modulated.movesPitch || d[0] != 0 || d[2] != 0 || d[4] != 0
        modulated.movesCutoff = modulated.movesCutoff || d[1] != 0 || d[3] != 0 || d[6] != 0
        modulated.hasTremolo = modulated.hasTremolo || d[5] != 0
    }

    /// FluidSynth's sources one tick on: the envelope by `fluid_adsr_env_calc` (its pitch read
    /// through the convex curve in the attack), the LFOs by `fluid_lfo_calc`. Thread: render.
    @_noLocks
    @inline(__always)
    private func stepFluidSynthSources(
        _ modulated: inout ModulatedVoice, _ ticks: ModulationTicks, curve: UnsafePointer<Double>
    ) -> SourceValues {
        stepModulation(&modulated, ticks, curve: curve)
        if modulated.ticks == 0 {
            // The LFOs start at 0, rising.
            modulated.modulationLFOStep = ticks.modulationLFO.step
            modulated.vibratoLFOStep = ticks.vibratoLFO.step
            firstTick(&modulated, ticks)
        }
        let age = modulated.ticks * 64 // (ModulationTicks.frames)
        stepLFO(&modulated.modulationLFO, &modulated.modulationLFOStep, age: age, delay: ticks.modulationLFO.delay)
        stepLFO(&modulated.vibratoLFO, &modulated.vibratoLFOStep, age: age, delay: ticks.vibratoLFO.delay)
        modulated.ticks += 1
        var values = SourceValues()
        // (The pitch and the cutoff alike: FluidSynth's `modenv_val`, the convex curve's in the
        // attack.)
        values.pitchLevel = heardLevel(modulated, curve: curve)
        values.cutoffLevel = values.pitchLevel
        values.modulationLFO = modulated.modulationLFO
        values.vibratoLFO = modulated.vibratoLFO
        return values
    }

    /// sfizz's sources at the tick: the envelopes stepped frame by frame through the tick (a
    /// note-off since the last tick releasing them), the LFOs computed from the voice's age;
    /// each read where what it moves is best held or aimed (`SFZModulation.swift`): the cutoff's
    /// at the tick's first frame, the pitch's at its middle, the level's (the modulation LFO,
    /// SFZ's `amplfo`) at its end. Thread: render.
    @_noLocks
    @inline(never)
    private func stepSFZSources(slot: Int, region: Int, _ modulated: inout ModulatedVoice) -> SourceValues {
        let rates = table.sfzModulations + region, voice = pool.sfzVoices + slot
        if modulated.releaseAsked {
            modulated.releaseAsked = false
            voice.pointee.pitchEnvelope.release()
            voice.pointee.cutoffEnvelope.release()
        }
        let frames = 16 // (ModulationTicks.sfzFrames)
        var values = SourceValues()
        // The envelopes that move something (an LFO alone leaves them be).
        let d = modulated.depths, separate = rates.pointee.separateCutoffEnvelope
        if d[0] != 0 || (!separate && d[1] != 0) {
            let pitch = voice.pointee.pitchEnvelope.tick(rates.pointee.pitchEnvelope, frames: frames)
            values.pitchLevel = pitch.middle
            values.cutoffLevel = pitch.first
        }
        if separate, d[1] != 0 {
            values.cutoffLevel = voice.pointee.cutoffEnvelope.tick(rates.pointee.cutoffEnvelope, frames: frames).first
        }
        // The LFOs that move something (the depths are set at the first tick).
        let age = modulated.ticks * frames
        if d[2] != 0 || d[3] != 0 || d[5] != 0 {
            modulated.modulationLFO = sfzLFO(rates.pointee.modulationLFO, age: age + frames)
        }
        if d[4] != 0 { modulated.vibratoLFO = sfzLFO(rates.pointee.vibratoLFO, age: age + frames / 2) }
        if d[6] != 0 { values.filterLFO = sfzLFO(rates.pointee.filterLFO, age: age) }
        modulated.ticks += 1
        values.modulationLFO = modulated.modulationLFO
        values.vibratoLFO = modulated.vibratoLFO
        return values
    }
}
