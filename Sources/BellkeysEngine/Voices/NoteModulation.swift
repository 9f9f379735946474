import BellkeysModel

// Note-on modulators (`Region.noteModulators`): what a voice's velocity, key and its channel's
// controllers add to its level, pitch and filter as it starts.

/// What a starting voice's modulators add, by destination (`ModulatorDestination`).
struct NoteOnSums {
    var levelDecibels = 0.0
    var pitchCents = 0.0
    var cutoffCents = 0.0
    var resonanceDecibels = 0.0
    /// What they add to the modulation sources' depths, by `ModulatedDepth` lane, and to the
    /// envelopes' times (cents) and sustains: delay, attack, hold, decay, sustain, release, the
    /// volume envelope's in lanes 0 ... 5 (its sustain in centibels), the modulation envelope's in
    /// 8 ... 13 (its sustain in tenths of a percent); lanes 6 and 7, to the sample's start, fine
    /// and coarse.
    var depths = SIMD8<Double>()
    var times = SIMD16<Double>()
    /// For a pitch in whole cents: the fraction of a cent left above the voice's whole pitch
    /// (its region's, with the cents added: those are cut down to a whole cent).
    var pitchFraction = 0.0
    /// The factor on the strike's gain their level makes (`Engine.noteOnLevel`).
    var levelFactor: Float = 1

    @_noLocks
    init() {}
}

extension Engine {
    /// The sums of region `r`'s note-on modulators for a note of `note` at `velocity` on
    /// `channel`: each is its amount × its source's curve at the source's value (× its amount
    /// source's). Thread: render. Real-time safe.
    @_noLocks
    func noteOnSums(region r: Int, channel: Int, note: Int, velocity: Int) -> NoteOnSums {
        var sums = NoteOnSums()
        let modulators = table.noteModulators
        let start = Int(table.regions[r].modulatorStart)
        for i in start..<(start + Int(table.regions[r].modulatorCount)) {
            let term = modulators.terms[i]
            var value =
                term.amount
                * modulators.curves[
                    Int(term.curve) + sourceValue(term.source, channel: channel, note: note, velocity: velocity)]
            if term.amountSource != -3 { // ModulatorTerm.none
                value *=
                    modulators.curves[
                        Int(term.amountCurve)
                            + sourceValue(term.amountSource, channel: channel, note: note, velocity: velocity)]
            }
            switch term.destination {
            case 0: sums.levelDecibels += value // ModulatorTerm.level
            case 1: sums.pitchCents += value // .pitch
            case 2: sums.cutoffCents += value // .cutoff
            case 3: sums.resonanceDecibels += value // .resonance
            case 4...9: sums.depths[Int(term.destination) - 4] += value // .firstDepth + a ModulatedDepth lane
            default: sums.times[Int(term.destination) - 10] += value // .firstTime or .firstModulationTime + a stage
            }
        }
        // A pitch beyond ten octaves either way is a damaged file's: held there. In whole cents
        // (a SoundFont's), the region's fraction of a cent and the cents added are cut down
        // together, as FluidSynth cuts its voice's whole pitch.
        sums.pitchCents = max(-12_000, min(12_000, sums.pitchCents))
        if table.noteModulators.bounds[r].wholeCents {
            let x = table.regions[r].pitchFraction + sums.pitchCents
            var whole = Double(Int(x))
            if whole > x { whole -= 1 }
            sums.pitchCents = whole
            sums.pitchFraction = x - whole
        }
        return sums
    }

    /// The frame a voice of region `r` starts at when its note-on modulators move the sample's
    /// start (`sums` lanes 6 and 7): the region's fine and coarse offsets with theirs, each sum cut
    /// down to a whole number (FluidSynth's `(int)`), within the sample. Thread: render.
    /// Real-time safe.
    @_noLocks
    func startFrame(_ sums: NoteOnSums, region r: Int) -> Int {
        let b = table.noteModulators.bounds[r]
        let start = Int(b.startFine + sums.times[6]) + 32_768 * Int(b.startCoarse + sums.times[7])
        return max(0, min(Int(table.regions[r].frameCount) - 1, start))
    }

    /// A source's value now, where its curve is read: the note's velocity or key, the channel's
    /// controller or pressure, the key's pressure (0...127 each), the wheel (0...16383) or its
    /// range in whole semitones (RPN 0's data entry, 0...127: FluidSynth's, which has no cents). (`ModulatorTerm`'s
    /// codes are written as literals on this path: read through their statics, they are calls
    /// the real-time check cannot see into.)
    @_noLocks
    func sourceValue(_ source: Int, channel: Int, note: Int, velocity: Int) -> Int {
        if source >= 0 { return Int(midi.controllerValues[128 * channel + source]) }
        switch source {
        case -1: return velocity // ModulatorTerm.velocity
        case -2: return note // .key
        case -4: return midi.channels[channel].pressure // .channelPressure
        case -5: return Int(midi.keyPressures[128 * channel + note]) // .keyPressure
        case -6: return midi.channels[channel].bend // .pitchWheel
        default: return midi.channels[channel].bendRangeSemitones // .pitchWheelRange
        }
    }

    /// The factor on a strike's gain (`velocityGain` its velocity's share) of `sums`' decibels:
    /// no more than region `r`'s ceiling, raised by what the velocity took away; and the level's
    /// share of the resonance's change, the resonance first kept within its bounds (`sums`
    /// then holds that change). Thread: render. Real-time safe.
    @_noLocks
    func noteOnLevel(_ sums: inout NoteOnSums, region r: Int, velocityGain: Float) -> Float {
        let b = table.noteModulators.bounds[r]
        let softer = velocityGain > 0 ? -20 * 0.301_029_995_663_981_2 * log2Fast(Double(velocityGain)) : 0
        var decibels = min(sums.levelDecibels, b.levelCeiling + softer)
        let resonance = max(b.lowestResonance, min(b.highestResonance, b.resonance + sums.resonanceDecibels))
        sums.resonanceDecibels = resonance - b.resonance
        decibels += b.resonanceLevelShare * sums.resonanceDecibels
        sums.levelFactor = Float(exp2Fast(decibels * (3.321_928_094_887_362_3 / 20)))
        return sums.levelFactor
    }
}

/// An increment moved by `cents` (its modulators'), rounded to the nearest. Thread: render.
@_noLocks
func movedIncrement(_ increment: UInt64, cents: Double) -> UInt64 {
    UInt64(Double(increment) * exp2Fast(cents / 1200) + 0.5)
}
