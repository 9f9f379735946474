import BellkeysFormats
import BellkeysModel
import Testing

/// An SFZ region's `pitcheg`, `fileg`, `amplfo`, `pitchlfo` and `fillfo` opcodes, read and put
/// onto the engine's modulation sources by sfizz's rules.
@Suite struct SFZModulationOpcodes {
    func compiled(_ opcodes: String) throws -> (region: Region, warnings: [String]) {
        let text = "<region> sample=a.wav \(opcodes)\n"
        let compiled = try compileSFZ(
            path: "/i/x.sfz", files: .inMemory(["/i/x.sfz": Array(text.utf8), "/i/a.wav": []]))
        let made = compiled.instrument(facts: [SampleFacts(index: 0, frameCount: 1_000)], overriding: nil)
        return (try #require(made.instrument.regions.first), made.warnings)
    }

    @Test func everyOpcodeLandsInItsField() throws {
        let d = try parseSFZText(
            "<group> pitcheg_delay=0.1 pitcheg_start=10 pitcheg_attack=0.2 pitcheg_hold=0.3 pitcheg_decay=0.4 "
                + "pitcheg_sustain=50 pitcheg_release=0.5 pitcheg_depth=-1200 pitcheg_vel2depth=300 "
                + "fileg_veltodepth=-100 fileg_depth=2400\n"
                + "<region> sample=a.wav amplfo_freq=3 amplfo_depth=-2 amplfo_delay=0.5 amplfo_fade=1 "
                + "pitchlfo_wave=6 pitchlfo_freq=5.5 pitchlfo_depth=25 fillfo_freq=0.5 fillfo_depth=600\n")
        let r = try #require(d.regions.first)
        #expect(r.pitchEG.delay == 0.1 && r.pitchEG.start == 10 && r.pitchEG.attack == 0.2 && r.pitchEG.hold == 0.3)
        #expect(r.pitchEG.decay == 0.4 && r.pitchEG.sustain == 50 && r.pitchEG.release == 0.5)
        #expect(r.pitchEG.depth == -1_200 && r.pitchEG.velToDepth == 300)
        #expect(r.filterEG.depth == 2_400 && r.filterEG.velToDepth == -100 && r.filterEG.sustain == 100)
        #expect(r.amplitudeLFO.frequency == 3 && r.amplitudeLFO.depth == -2 && r.amplitudeLFO.delay == 0.5)
        #expect(r.amplitudeLFO.fade == 1 && r.amplitudeLFO.wave == 1)
        #expect(r.pitchLFO.wave == 6 && r.pitchLFO.frequency == 5.5 && r.pitchLFO.depth == 25)
        #expect(r.filterLFO.frequency == 0.5 && r.filterLFO.depth == 600)
        #expect(d.warnings.isEmpty)
    }

    /// `pitcheg` is the envelope (its depth to the pitch), `fileg` beside it the cutoff's own;
    /// `pitchlfo` the vibrato, `amplfo` the modulation LFO to the level, `fillfo` the filter LFO;
    /// a `*_vel2depth` a velocity modulator (velocity / 127) to the envelope's depth.
    @Test func theOpcodesBecomeTheEnginesSourcesBySfizzsRules() throws {
        let (r, warnings) = try compiled(
            "cutoff=500 pitcheg_start=20 pitcheg_attack=0.2 pitcheg_sustain=50 pitcheg_depth=1200 "
                + "pitcheg_vel2depth=-300 fileg_decay=0.7 fileg_sustain=0 fileg_depth=2400 "
                + "pitchlfo_freq=5 pitchlfo_depth=40 amplfo_freq=2 amplfo_depth=3 amplfo_fade=0.5 "
                + "fillfo_wave=3 fillfo_freq=1 fillfo_depth=600")
        #expect(warnings.isEmpty)
        let m = try #require(r.modulation)
        #expect(m.rules == .sfz && m.cutoffRange == 1...20_000 && !m.pitchInWholeCents)
        #expect(m.envelope.start == 0.2 && m.envelope.attack == 0.2 && m.envelope.sustain == 0.5)
        #expect(m.envelope.release == 0 && m.envelopeToPitchCents == 1_200 && m.envelopeToCutoffCents == 2_400)
        let cutoff = try #require(m.cutoffEnvelope)
        #expect(cutoff.decay == 0.7 && cutoff.sustain == 0 && cutoff.attack == 0)
        #expect(m.vibratoLFO.frequency == 5 && m.vibratoLFO.wave == .sine && m.vibratoLFOToPitchCents == 40)
        #expect(m.modulationLFO.frequency == 2 && m.modulationLFO.fade == 0.5 && m.modulationLFOToVolumeDecibels == 3)
        #expect(m.modulationLFOToPitchCents == 0 && m.modulationLFOToCutoffCents == 0)
        #expect(m.filterLFO.wave == .square && m.filterLFO.frequency == 1 && m.filterLFOToCutoffCents == 600)
        let modulators = try #require(r.noteModulators).modulators
        #expect(modulators.count == 1 && modulators[0].source == .velocity && modulators[0].amount == -300)
        #expect(modulators[0].destination == .envelopeToPitchCents && modulators[0].curve[127] == 1)
        #expect(modulators[0].curve[64] == 64.0 / 127)
    }

    /// `fileg` alone is the envelope (to the cutoff only); a region with none of them has no
    /// modulation at all, and one whose depths are all 0 neither.
    @Test func aRegionWithoutThemPlaysAsBefore() throws {
        let (r, _) = try compiled("cutoff=500 fileg_attack=0.1 fileg_depth=1200")
        let m = try #require(r.modulation)
        #expect(m.envelope.attack == 0.1 && m.cutoffEnvelope == nil && m.envelopeToPitchCents == 0)
        #expect(m.envelopeToCutoffCents == 1_200)
        #expect(try compiled("cutoff=500").region.modulation == nil)
        #expect(try compiled("pitcheg_attack=0.5 pitchlfo_freq=5 amplfo_freq=1").region.modulation == nil)
    }

    /// sfizz's lpf_2p has Q = 10^(resonance / 20), 1 at 0 dB: the model's resonance is 3.01 dB
    /// more (its 0 dB is a Butterworth's 1/√2).
    @Test func theResonanceIsSfizzs() throws {
        #expect(abs(try compiled("cutoff=500").region.resonance - 3.010_299_956_639_812) < 1e-12)
        #expect(abs(try compiled("cutoff=500 resonance=6").region.resonance - 9.010_299_956_639_812) < 1e-12)
    }

    /// What bellkeys leaves out is said, once: the cutoff's sources without a cutoff (as in
    /// sfizz, they do nothing) or on a one-pole filter, a wave beyond 7, the opcodes it does not
    /// read.
    @Test func whatIsLeftOutIsSaid() throws {
        let none = try compiled("fileg_depth=1200 fillfo_freq=2 fillfo_depth=100")
        #expect(none.region.modulation == nil)
        #expect(
            none.warnings.contains { $0.contains("fileg and fillfo move a filter's cutoff, and this region has none") })
        let filegAlone = try compiled("fileg_depth=1200")
        #expect(filegAlone.warnings.contains { $0.contains("fileg moves a filter's cutoff, and this region has none") })
        let onePole = try compiled("cutoff=300 fil_type=lpf_1p fileg_depth=1200")
        #expect(onePole.region.modulation == nil)
        #expect(onePole.warnings.contains { $0.contains("fileg is left out on a one-pole filter (fil_type=lpf_1p)") })
        let random = try compiled("pitchlfo_wave=12 pitchlfo_freq=2 pitchlfo_depth=100")
        #expect(random.region.modulation == nil)
        #expect(random.warnings.contains { $0.contains("pitchlfo_wave=12 (random steps) is left out") })
        let none8 = try compiled("amplfo_wave=8 amplfo_freq=2 amplfo_depth=3")
        #expect(none8.region.modulation == nil)
        #expect(none8.warnings.contains { $0.contains("amplfo_wave=8 is no wave: that LFO is still, as in sfizz") })
        let unread = try compiled("pitcheg_vel2attack=0.1 pitcheg_depth=100")
        #expect(unread.warnings.contains { $0.contains("pitcheg_vel2attack") })
        #expect(unread.region.modulation != nil)
    }
}
