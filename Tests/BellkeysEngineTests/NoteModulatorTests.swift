import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// A looped 1 kHz sine at 48 kHz through a two-pole low-pass at 4 kHz, and an engine that plays
/// `region` (built on it) alone, with no limiter.
func filteredSine() -> Region {
    var region = Region(sampleIndex: 0)
    region.loopMode = .continuous
    region.loopEnd = 47_999
    region.filter = .lowPass2
    region.cutoff = 4_000
    return region
}

func sineEngine(_ region: Region) -> Engine {
    let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
    var config = EngineConfiguration(sampleRate: 48_000)
    config.limiterThreshold = 100
    var instrument = Instrument(keys: [])
    instrument.regions = [region]
    return Engine(bank: bank, instrument: instrument, configuration: config)
}

/// Note-on modulators: velocity to the cutoff, the key to the pitch, a controller to the level
/// and the resonance, summed as a voice starts.
@Suite struct NoteOnModulators {
    @Test func aVoiceStartsWithItsModulatorsSums() throws {
        var region = filteredSine()
        region.noteModulators = NoteModulators(
            modulators: [
                Modulator(
                    source: .velocity, curve: Modulator.linear.map { 1 - $0 }, amount: -2_400, destination: .cutoffCents
                ),
                Modulator(source: .key, curve: Modulator.linear, amount: 128, destination: .pitchCents),
                Modulator(
                    source: .controller(2), curve: Modulator.linear, amountSource: .velocity,
                    amountCurve: Modulator.linear,
                    amount: -12, destination: .levelDecibels),
                Modulator(source: .controller(2), curve: Modulator.linear, amount: 6, destination: .resonanceDecibels),
            ], cutoffRange: 20...20_000, levelCeilingDecibels: 0)
        let e = sineEngine(region)
        var bare = region
        bare.noteModulators = nil
        let plain = sineEngine(bare)
        e.enqueue(.control(frame: 0, controller: 2, value: 64))
        e.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        plain.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        _ = render(e, 64)
        _ = render(plain, 64)
        let slot = Int(e.pool.active[0]), other = Int(plain.pool.active[0])
        // The key: 128 × 64/128 = 64 cents up.
        let increment = e.pool.pitchedVoices[slot].baseIncrement
        let base = plain.pool.pitchedVoices[other].baseIncrement
        #expect(increment == UInt64(Double(base) * exp2Fast(64.0 / 1_200) + 0.5))
        // Velocity 32: −2,400 × (1 − 32/128) = −1,800 cents off 4 kHz; CC2 at 64: Q up 3 dB.
        let q = 0.707_106_781_186_547_5 * pow(10, 3.0 / 20)
        let expected = lowPassCoefficients(cutoff: 4_000 * pow(2, -1_800.0 / 1_200), q: q, sampleRate: 48_000)
        let got = e.pool.pitchedVoices[slot].filterCoefficients
        #expect((0..<5).allSatisfy { abs(got[$0] - expected[$0]) < 1e-6 }, "\(got) against \(expected)")
        // CC2 at 64 × velocity 32: −12 × 0.5 × 0.25 = −1.5 dB (and never above the ceiling).
        let ratio = Double(e.pool.voices[slot].gain.target / plain.pool.voices[other].gain.target)
        #expect(abs(20 * log10(ratio) + 1.5) < 1e-4)
    }
}

/// Note-on modulators to the modulation sources' depths (MuseScore's pianos open their filter
/// envelope by velocity): a voice plays, to the bit, as the voice of a region whose depths are
/// the sums; a region whose depths are all 0 is moved by its modulators alone.
@Suite struct NoteOnDepthModulators {
    func rendered(_ region: Region, velocity: Int) -> [Float] {
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: velocity))
        return render(e, 9_600)
    }

    @Test func theDepthsAreTheRegionsAndTheModulatorsSummed() {
        var region = filteredSine()
        region.modulation = VoiceModulation(
            envelope: ModulationEnvelope(attack: 0.01, decay: 0.05, sustain: 0.3), envelopeToCutoffCents: -1_200,
            modulationLFO: ModulationLFO(frequency: 6), modulationLFOToVolumeDecibels: 3,
            vibratoLFO: ModulationLFO(frequency: 5), vibratoLFOToPitchCents: 20)
        var modulated = region
        modulated.noteModulators = NoteModulators(
            modulators: [
                Modulator(
                    source: .velocity, curve: Modulator.linear, amount: 3_000, destination: .envelopeToCutoffCents),
                Modulator(source: .key, curve: Modulator.linear, amount: 64, destination: .vibratoLFOToPitchCents),
                Modulator(
                    source: .velocity, curve: Modulator.linear, amount: -2, destination: .modulationLFOToVolumeDecibels),
            ], cutoffRange: 20...20_000, levelCeilingDecibels: 0)
        for velocity in [20, 100] {
            var summed = region
            let v = Double(velocity) / 128
            summed.modulation!.envelopeToCutoffCents += 3_000 * v
            summed.modulation!.vibratoLFOToPitchCents += 64 * 67.0 / 128
            summed.modulation!.modulationLFOToVolumeDecibels += -2 * v
            let same = rendered(modulated, velocity: velocity) == rendered(summed, velocity: velocity)
            #expect(same, "velocity \(velocity)")
        }
        // A region with no depth of its own: its envelope moves the cutoff by the modulator alone.
        var bare = region
        bare.modulation!.envelopeToCutoffCents = 0
        var onlyModulated = bare
        onlyModulated.noteModulators = NoteModulators(
            modulators: [
                Modulator(
                    source: .velocity, curve: Modulator.linear, amount: -2_400, destination: .envelopeToCutoffCents)
            ],
            cutoffRange: 20...20_000)
        var set = bare
        set.modulation!.envelopeToCutoffCents = -2_400 * 100 / 128
        let moved = rendered(onlyModulated, velocity: 100)
        let (asSet, unmoved) = (moved == rendered(set, velocity: 100), moved == rendered(bare, velocity: 100))
        #expect(asSet && !unmoved)
    }
}

/// Note-on modulators to the modulation envelope's times: a voice plays as a region whose
/// envelope has the summed times would, bit for bit.
@Suite struct NoteOnModulationEnvelopeTimes {
    func rendered(_ region: Region, velocity: Int) -> [Float] {
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: velocity))
        e.enqueue(.noteOff(frame: 6_000, note: 67))
        return render(e, 12_000)
    }

    @Test func aVoicesModulationEnvelopeIsItsRegionsMoved() {
        var region = filteredSine()
        region.envelope = Envelope(release: 0.05)
        let seconds = { (timecents: Double) -> Double in Glibc.exp2(timecents / 1_200) }
        region.modulation = VoiceModulation(
            envelope: ModulationEnvelope(
                attack: seconds(-3_600), decay: seconds(-2_400), sustain: 1 - Double(Float(0.001)) * 300,
                release: seconds(-3_000)),
            envelopeToPitchCents: 200, envelopeToCutoffCents: -1_200)
        var moved = region
        moved.modulation!.envelope.timecents = EnvelopeTimecents(
            delay: -12_000, attack: -3_600, hold: -32_768, decay: -2_400, sustainCentibels: 300, release: -3_000)
        moved.noteModulators = NoteModulators(
            modulators: [
                Modulator(
                    source: .velocity, curve: Modulator.linear, amount: 2_400,
                    destination: .modulationEnvelopeAttackCents),
                Modulator(
                    source: .key, curve: Modulator.linear, amount: -1_200, destination: .modulationEnvelopeDecayCents),
                Modulator(
                    source: .velocity, curve: Modulator.linear, amount: 200,
                    destination: .modulationEnvelopeSustainPerMille),
                Modulator(
                    source: .key, curve: Modulator.linear, amount: 1_200, destination: .modulationEnvelopeReleaseCents),
            ], cutoffRange: 20...20_000)
        for velocity in [40, 110] {
            let v = Double(velocity) / 128, k = 67.0 / 128
            var summed = region
            summed.modulation!.envelope = ModulationEnvelope(
                attack: seconds(-3_600 + 2_400 * v), decay: seconds(-2_400 - 1_200 * k),
                sustain: 1 - Double(Float(0.001)) * (300 + 200 * v), release: seconds(-3_000 + 1_200 * k))
            let a = rendered(moved, velocity: velocity)
            let (same, unmoved) = (a == rendered(summed, velocity: velocity), a == rendered(region, velocity: velocity))
            #expect(same && !unmoved, "velocity \(velocity)")
        }
        // Its own ticks, not its region's: a voice of the region itself reads the region's.
        let e = sineEngine(moved)
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: 110))
        _ = render(e, 64)
        let slot = Int(e.pool.active[0])
        #expect(e.pool.modulatedVoices[slot].ownsTicks)
        // −3,600 + 2,400 × 110/128 = −1,537.5 tc, 0.4118 s: 308.8 ticks at 48 kHz, cut down, plus one.
        #expect(e.pool.voiceModulations[slot].attack == 309)
        let plain = sineEngine(region)
        plain.enqueue(.noteOn(frame: 0, note: 67, velocity: 110))
        _ = render(plain, 64)
        #expect(!plain.pool.modulatedVoices[Int(plain.pool.active[0])].ownsTicks)
    }
}

/// Note-on modulators to the sample's start (MuseScore's Clarinet and Flute start later into
/// their samples at lower keys): the region's offsets and theirs summed, each cut down to a whole
/// number as FluidSynth cuts it, within the sample.
@Suite struct NoteOnStartOffsets {
    @Test func aVoiceStartsWhereItsModulatorsMoveTheStart() {
        var region = filteredSine()
        region.filter = nil
        region.offset = 8_000
        var modulators = NoteModulators(modulators: [
            Modulator(source: .key, curve: Modulator.linear, amount: -6_000, destination: .startOffsetFrames),
            Modulator(source: .velocity, curve: Modulator.linear, amount: 2, destination: .startOffsetCoarseFrames),
        ])
        modulators.startOffsets = (8_000, 0)
        region.noteModulators = modulators
        // (key, velocity, the frame it starts at): 8,000 − 6,000 × key/128 cut down, and 32,768 ×
        // (2 × velocity/128 cut down).
        for (key, velocity, start) in [
            (60, 10, 5_187), (61, 64, 5_140 + 32_768), (60, 127, 5_187 + 32_768), (0, 1, 8_000),
        ] {
            let e = sineEngine(region)
            e.enqueue(.noteOn(frame: 0, note: key, velocity: velocity))
            _ = render(e, 1)
            let read = e.pool.pitchedVoices[Int(e.pool.active[0])].phaseFrames
            let increment = e.pool.pitchedVoices[Int(e.pool.active[0])].increment
            #expect(read == UInt64(start) << 32 + increment, "key \(key) velocity \(velocity)")
        }
        // Far out either way: within the sample.
        modulators.modulators[0].amount = -30_000
        region.noteModulators = modulators
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 127, velocity: 1))
        _ = render(e, 1)
        let voice = e.pool.pitchedVoices[Int(e.pool.active[0])]
        #expect(voice.phaseFrames == voice.increment)
    }
}

/// Note-on modulators to the volume envelope's times (MuseScore's hi-hats and pianos set decay
/// and release by velocity and key): the voice's own envelope, counted in FluidSynth's blocks
/// from the region's timecents and theirs summed.
@Suite struct NoteOnEnvelopeTimes {
    @Test func aVoicesTimesAreItsRegionsMovedAndCountedInBlocks() {
        var region = filteredSine()
        region.filter = nil
        region.envelope = Envelope(attack: 0.5, decay: 2, sustain: 0.331, release: 1)
        region.envelope?.timecents = EnvelopeTimecents(
            delay: -12_000, attack: -1_200, hold: -32_768, decay: 1_200, sustainCentibels: 100, release: 0)
        region.noteModulators = NoteModulators(modulators: [
            Modulator(source: .velocity, curve: Modulator.linear, amount: 2_400, destination: .envelopeAttackCents),
            Modulator(source: .key, curve: Modulator.linear, amount: -1_200, destination: .envelopeReleaseCents),
        ])
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        _ = render(e, 64)
        let slot = Int(e.pool.active[0])
        #expect(e.pool.pitchedVoices[slot].ownsEnvelope)
        let f = e.pool.voiceEnvelopes[slot]
        // Attack: −1,200 + 2,400 × 32/128 = −600 tc, 0.7071 s: 530.3 blocks at 48 kHz, cut down, plus one.
        #expect(f.delay == 0 && f.attack == 64 * 531 && f.hold == 0)
        // Decay: 2 s, 1,500 blocks; release: 0 − 1,200 × 64/128 = −600 tc, 531 blocks; both fall
        // 90 dB in 90/96 of their time.
        let fall = 90.0 / 20 * 3.321_928_094_887_362_3 // log₂ 10
        #expect(abs(f.decayRate + fall / (96_000 * 0.9375)) < 1e-15)
        #expect(abs(f.releaseRate + fall / (64 * 531 * 0.9375)) < 1e-15)
        // Sustain: 100 cB, 9.6 dB down; the decay reaches it in 9.6/90 of its fall.
        #expect(abs(Double(f.sustain) - pow(10, -9.6 / 20)) < 1e-6)
        #expect(abs(Double(f.decay) - 96_000 * 0.9375 * 9.6 / 90) <= 1)
        // A voice struck harder rises slower; another region's voice keeps the region's envelope.
        e.enqueue(.noteOn(frame: 64, note: 64, velocity: 127))
        _ = render(e, 64)
        let harder = (0..<e.activeCount).map { Int(e.pool.active[$0]) }.first { $0 != slot }!
        // −1,200 + 2,400 × 127/128 = 1,181.25 tc, 1.9785 s: 1,483.9 blocks, cut down, plus one.
        #expect(e.pool.voiceEnvelopes[harder].attack == 64 * 1_484)
        var plain = region
        plain.noteModulators = nil
        plain.envelope?.timecents = nil
        let p = sineEngine(plain)
        p.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        _ = render(p, 64)
        #expect(!p.pool.pitchedVoices[Int(p.pool.active[0])].ownsEnvelope)
    }
}

/// The bounds of note-on modulators: the level's ceiling (raised by what the velocity took
/// away), the resonance's range and the level's share of its change, the pitch's ten octaves;
/// the Q kept when a modulation envelope moves the cutoff; the tremolo of a fading voice; the
/// controllers a reset leaves.
@Suite struct NoteOnModulatorBounds {
    func engine(_ modulators: [Modulator], resonance: Double = 0, modulation: VoiceModulation? = nil) -> Engine {
        var region = filteredSine()
        region.resonance = resonance
        region.velocityGains = [Float](repeating: 0.5, count: 128) // 6.02 dB down at every velocity
        region.modulation = modulation
        region.noteModulators = NoteModulators(
            modulators: modulators, levelCeilingDecibels: 3, resonanceRange: 0...96, resonanceLevelShare: -0.5)
        return sineEngine(region)
    }
    static let one = [Double](repeating: 1, count: 128)

    @Test func boundsHoldWhatModulatorsMove() throws {
        // +20 dB asked: 3 dB and the velocity's 6.02; resonance 10 + 100 held at 96: the level
        // down half of 86; the pitch 10^7 cents held at 12,000.
        let e = engine(
            [
                Modulator(source: .key, curve: Self.one, amount: 20, destination: .levelDecibels),
                Modulator(source: .key, curve: Self.one, amount: 100, destination: .resonanceDecibels),
                Modulator(source: .key, curve: Self.one, amount: 1e7, destination: .pitchCents),
            ], resonance: 10)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 64)
        let slot = Int(e.pool.active[0])
        let decibels = 20 * log10(Double(e.pool.voices[slot].gain.target / e.table.regions[0].gain / 0.5))
        #expect(abs(decibels - (3 + 20 * log10(2.0) - 43)) < 1e-3, "\(decibels) dB")
        #expect(e.pool.pitchedVoices[slot].baseIncrement == 1 << 42)
        let q = e.table.regions[0].filterQ * pow(10, 86.0 / 20)
        let expected = lowPassCoefficients(cutoff: 4_000, q: q, sampleRate: 48_000)
        let got = e.pool.pitchedVoices[slot].filterCoefficients
        #expect((0..<5).allSatisfy { abs(got[$0] - expected[$0]) < 1e-6 })
    }

    /// A modulated voice's moving cutoff keeps the Q its modulators gave it.
    @Test func theQStaysWhenTheCutoffMoves() {
        let e = engine(
            [Modulator(source: .key, curve: Self.one, amount: 6, destination: .resonanceDecibels)],
            modulation: VoiceModulation(
                envelope: ModulationEnvelope(decay: 0.1, sustain: 0), envelopeToCutoffCents: 1_200))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        _ = render(e, 64 * 3 + 1)
        let slot = Int(e.pool.active[0])
        let q = e.table.regions[0].filterQ * pow(10, 6.0 / 20)
        #expect(abs(e.pool.modulatedVoices[slot].filterQ - q) < 1e-9)
        let cutoff = e.pool.modulatedVoices[slot].lastCutoff
        let expected = lowPassCoefficients(cutoff: cutoff, q: q, sampleRate: 48_000)
        let target = e.pool.modulatedVoices[slot].filterTarget
        #expect(cutoff > 4_000 && (0..<5).allSatisfy { abs(target[$0] - expected[$0]) < 1e-6 })
    }

    /// A fading voice has no envelope left: its tremolo only dips it. Held at a quarter, it
    /// moves both ways.
    @Test func aFadingVoicesTremoloOnlyDips() {
        var envelope = EnvelopeState()
        envelope.strike = 1
        envelope.stage = .none
        #expect(tremolo(lfoCentibels: 60, gain: 0, envelope) == 1)
        #expect(tremolo(lfoCentibels: -60, gain: 0, envelope) == Float(exp2Fast(-60.0 / 200 * 3.321_928_094_887_362_3)))
        envelope.stage = .sustain
        #expect(abs(Double(tremolo(lfoCentibels: 60, gain: 0.25, envelope)) - pow(10, 0.3)) < 1e-5)
    }

    /// Reset all controllers leaves volume, pan and the sound controllers, and sets expression
    /// to 127 (what a modulator reading them sees).
    @Test func aResetLeavesWhatFluidSynthLeaves() {
        let e = engine([])
        for (controller, value) in [(1, 100), (7, 50), (74, 30), (11, 20), (2, 90)] {
            e.enqueue(.control(frame: 0, controller: controller, value: value))
        }
        e.enqueue(.control(frame: 10, controller: 121, value: 0))
        _ = render(e, 64)
        let values = (0..<128).map { Int(e.midi.controllerValues[$0]) }
        #expect(values[1] == 0 && values[2] == 0 && values[7] == 50 && values[74] == 30 && values[11] == 127)
        #expect(values[101] == 127 && values[100] == 127)
    }
}
