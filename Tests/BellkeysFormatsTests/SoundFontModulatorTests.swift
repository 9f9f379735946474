import BellkeysModel
import Glibc
import Testing

@testable import BellkeysFormats

/// A SoundFont's modulators as note-on modulators, read as FluidSynth 2.3.1 reads them.
@Suite struct SoundFontModulators {
    /// FluidSynth's concave and convex tables, from their formula (`gen_conv.c`).
    static func convex(_ i: Int) -> Double { i == 0 ? 0 : (i == 127 ? 1 : 1 + 5.0 / 12 * log10(Double(i) / 127)) }
    static func concave(_ i: Int) -> Double { 1 - convex(127 - i) }

    /// Each type, polarity and direction at inputs over a range of 128, as
    /// `fluid_mod_transform_source_value` gives them.
    @Test func curvesAreFluidSynths() throws {
        let linearNegative = try #require(soundFontCurve(0x0102))
        #expect(linearNegative[0] == 1 && linearNegative[64] == 0.5 && linearNegative[127] == 1 - 127.0 / 128)
        let linearBipolar = try #require(soundFontCurve(0x0202))
        #expect(linearBipolar[0] == -1 && linearBipolar[64] == 0 && linearBipolar[96] == 0.5)
        // Concave, unipolar: the table at 127 x, straight between its points.
        let concave = try #require(soundFontCurve(0x0402))
        let x = 127.0 * 100 / 128
        let expected = Self.concave(99) + (Self.concave(100) - Self.concave(99)) * (x - 99)
        #expect(abs(concave[100] - expected) < 1e-12 && concave[0] == 0)
        // Convex, bipolar, negative: above the middle (strictly) the curve turns down.
        let convexBipolar = try #require(soundFontCurve(0x0B02))
        let y = 127 * 2 * (100.0 / 128 - 0.5)
        let up = Self.convex(Int(y)) + (Self.convex(Int(y) + 1) - Self.convex(Int(y))) * (y - Double(Int(y)))
        #expect(abs(convexBipolar[100] + up) < 1e-12 && convexBipolar[64] == 0)
        // A switch at half way; unipolar negative is 1 below it.
        let switchNegative = try #require(soundFontCurve(0x0D02))
        #expect(switchNegative[63] == 1 && switchNegative[64] == 0)
        #expect(soundFontCurve(0x1002) == nil) // type 4: FluidSynth plays the modulator at 0
    }

    /// Which modulators play at note-on and what each becomes: velocity and key, a controller
    /// FluidSynth accepts, to cutoff, Q (its resonance: the engine takes the passband's half), attenuation and
    /// tuning; not a transform, a refused controller, a default's identity, a live source.
    @Test func modulatorsBecomeNoteOnModulators() throws {
        func mod(
            _ source: UInt16, _ destination: UInt16, _ amount: Int16, _ amountSource: UInt16 = 0, transform: UInt16 = 0
        )
            -> SoundFontModulator
        {
            SoundFontModulator(
                source: source, destination: destination, amount: amount, amountSource: amountSource,
                transform: transform)
        }
        let cutoff = try #require(noteModulators(mod(0x0102, 8, -3600)))
        #expect(cutoff.count == 1 && cutoff[0].destination == .cutoffCents && cutoff[0].amount == -3600)
        #expect(cutoff[0].source == .velocity && cutoff[0].amountSource == nil)
        let q = try #require(noteModulators(mod(0x0003, 9, 100)))
        #expect(q.map(\.destination) == [.resonanceDecibels] && q.map(\.amount) == [10]) // the level: the engine
        #expect(q[0].source == .key)
        #expect(noteModulators(mod(0x0002, 48, 200, 0x0003))?.first?.amount == -20)
        #expect(noteModulators(mod(0x0002, 48, 200, 0x0003))?.first?.amountSource == .key)
        #expect(noteModulators(mod(0x0082, 51, 2))?.first?.amount == 200) // CC2 to coarse tune
        #expect(noteModulators(mod(0x0082, 52, 2))?.first?.source == .controller(2))
        #expect(noteModulators(mod(0x0102, 8, -3600, transform: 2)) == nil)
        #expect(noteModulators(mod(0x0086, 8, -3600)) == nil) // CC6: FluidSynth refuses it
        #expect(noteModulators(mod(0x0102, 8, -3600, 0x0C02)) == nil) // the inert default's identity
        // Live sources: pressure (channel and key), the wheel over 14 bits, its range.
        #expect(noteModulators(mod(0x000D, 8, 1200))?.first?.source == .channelPressure)
        #expect(noteModulators(mod(0x000A, 8, 1200))?.first?.source == .keyPressure)
        let wheel = try #require(noteModulators(mod(0x020E, 8, 1200))?.first)
        #expect(wheel.source == .pitchWheel && wheel.curve.count == 16_384)
        #expect(wheel.curve[0] == -1 && wheel.curve[8_192] == 0 && wheel.curve[16_383] == 2 * 16_383.0 / 16_384 - 1)
        #expect(noteModulators(mod(0x0010, 52, 100))?.first?.source == .pitchWheelRange)
        #expect(noteModulators(mod(0x0011, 52, 100)) == nil) // general source 17: undefined
        // The defaults to the vibrato are played (amount 50, or a zone's own); the wheel's is
        // the engine's bend.
        #expect(noteModulators(mod(0x0081, 6, 50))?.first?.source == .controller(1))
        #expect(noteModulators(mod(0x000D, 6, 80))?.first?.amount == 80)
        #expect(noteModulators(mod(0x020E, 52, 12_700, 0x0010)) == nil)
        #expect(noteModulators(mod(0x0000, 8, 1200)) == nil) // no source
        #expect(noteModulators(mod(0x0102, 17, 300)) == nil) // pan: not yet
        #expect(modulatorLeftOut(mod(0x0102, 8, -3600)) == nil)
        #expect(modulatorLeftOut(mod(0x0102, 17, 300)) != nil)
        // A live source to a time or the start is read as notes start, and said.
        #expect(modulatorLeftOut(mod(0x0082, 52, 100)) == nil)
        #expect(
            modulatorLeftOut(mod(0x0082, 38, 1200))
                == "a modulator from CC2 to the envelope's release (amount 1200) is read as notes start: "
                + "its source's later moves are left out")
        #expect(modulatorLeftOut(mod(0x0002, 38, 1200)) == nil) // velocity: read as the note starts anyway
        // A zone that fixes the velocity reads its own.
        let fixed = try #require(noteModulators(mod(0x0102, 8, -3600), fixedVelocity: 32))
        #expect(fixed[0].curve.allSatisfy { $0 == 1 - 32.0 / 128 })
    }

    /// A zone's own velocity-to-cutoff modulator (no amount source, as MuseScore's are) reaches
    /// its regions and turns their filter on; one with the default's identity (a velocity switch
    /// as amount source) does nothing, as in FluidSynth. Its level may rise by the zone's
    /// attenuation (0.4 × 120 cB) and the 45.6 cB CC7 and CC11 take.
    @Test func aZonesModulatorsReachItsRegions() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].modulators = [
            SoundFontModulator(source: 0x0102, destination: 8, amount: -3600, amountSource: 0, transform: 0),
            SoundFontModulator(source: 0x0102, destination: 8, amount: -1200, amountSource: 0x0C02, transform: 0),
        ]
        let region = try firstZoneRegions(builder)[0]
        let set = try #require(region.noteModulators)
        // (After FluidSynth's default vibrato from channel pressure and CC1.)
        #expect(set.modulators.map(\.amount) == [50, 50, -3600] && set.modulators[2].destination == .cutoffCents)
        #expect(abs(set.levelCeilingDecibels - (0.4 * 120 + 45.6) / 10) < 1e-9)
        #expect(set.resonanceRange == 0...96 && set.resonanceLevelShare == -0.5)
        #expect(region.filter == .lowPass2)
        #expect(soundFontControllerDefaults[7] == 100 && soundFontControllerDefaults[11] == 127)
        #expect(soundFontControllerDefaults[74] == 64 && soundFontControllerDefaults[1] == nil)
    }

    /// FluidSynth's default vibrato from CC1 and channel pressure: a zone's modulator of the
    /// same identity replaces its amount, a preset zone's adds to it.
    @Test func theDefaultVibratoIsReplacedAndAddedTo() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].modulators = [
            SoundFontModulator(source: 0x0081, destination: 6, amount: 100, amountSource: 0, transform: 0)
        ]
        builder.presets[0].zones[0].modulators = [
            SoundFontModulator(source: 0x0081, destination: 6, amount: 20, amountSource: 0, transform: 0),
            SoundFontModulator(source: 0x000D, destination: 6, amount: 30, amountSource: 0, transform: 0),
        ]
        let region = try firstZoneRegions(builder)[0]
        let amounts = region.noteModulators?.modulators.map { ($0.source, $0.amount) } ?? []
        #expect(amounts.count == 2)
        #expect(amounts.contains { $0 == (.controller(1), 120) })
        #expect(amounts.contains { $0 == (.channelPressure, 80) })
    }

    /// Generators 25 to 30 (the modulation envelope's times), 0 and 4 (the sample's start) as
    /// destinations; a zone's region keeps what the engine adds them to: its start offsets,
    /// whole cents, the modulation envelope's timecents when they move it, and its volume
    /// envelope reads nothing in its delay.
    @Test func envelopeTimesAndTheStartAsDestinations() throws {
        func mod(_ destination: UInt16) -> SoundFontModulator {
            SoundFontModulator(source: 0x0002, destination: destination, amount: 300, amountSource: 0, transform: 0)
        }
        let expected: [UInt16: ModulatorDestination] = [
            25: .modulationEnvelopeDelayCents, 26: .modulationEnvelopeAttackCents, 27: .modulationEnvelopeHoldCents,
            28: .modulationEnvelopeDecayCents, 29: .modulationEnvelopeSustainPerMille,
            30: .modulationEnvelopeReleaseCents, 0: .startOffsetFrames, 4: .startOffsetCoarseFrames,
        ]
        for (generator, destination) in expected {
            let made = try #require(noteModulators(mod(generator)), "generator \(generator)")
            #expect(made.map(\.destination) == [destination] && made[0].amount == 300, "generator \(generator)")
            #expect(modulatorLeftOut(mod(generator)) == nil, "generator \(generator)")
        }
        #expect(ModulatorDestination.modulationEnvelopeReleaseCents.isModulationEnvelopeTime)
        #expect(!ModulatorDestination.startOffsetFrames.isModulationEnvelopeTime)
        #expect(!ModulatorDestination.modulationEnvelopeDelayCents.isEnvelopeTime)

        var builder = testFont()
        builder.instruments[0].zones[1].modulators = [mod(26), mod(0)]
        builder.instruments[0].zones[1].generators += [
            (.modEnvToPitch, 50), (.attackModEnv, -1_200), (.startAddrsOffset, 7),
        ]
        let region = try firstZoneRegions(builder)[0]
        let set = try #require(region.noteModulators)
        #expect(set.startOffsets == (7, 0) && set.pitchInWholeCents)
        #expect(region.modulation?.envelope.timecents?.attack == -1_200)
        #expect(region.modulation?.pitchInWholeCents == true && region.pitchCentsFraction == 0)
        #expect(region.envelope?.readsInDelay == false && region.envelope?.timecents == nil)
    }
}
