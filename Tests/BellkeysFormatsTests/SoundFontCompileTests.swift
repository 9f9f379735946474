import BellkeysFormats
import BellkeysModel
import FuzzChecks
import Testing

/// The SoundFont compile step without a disk: the test font's bytes in memory, places in the
/// bank made up.
@Suite struct SoundFontCompile {
    func compile(_ builder: SoundFontBuilder = testFont(), preset: PresetChoice? = nil, rate: Int? = nil)
        throws(InstrumentError) -> CompiledSoundFont
    {
        let font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "/f/t.sf2")
        return try compileSoundFont(path: "/f/t.sf2", font: font, preset: preset, sampleRate: rate)
    }

    func refusal(_ preset: PresetChoice) -> InstrumentProblem? {
        do {
            _ = try compile(preset: preset)
            return nil
        } catch {
            return error.problems.first
        }
    }

    @Test func theFirstPresetItsSamplesAndItsRate() throws {
        // No bank 0 program 0: the font's first preset.
        let compiled = try compile()
        #expect(compiled.presetName == "0:14 Bells")
        #expect(compiled.presetDescription == "preset 0:14 Bells (General MIDI's program 15)")
        #expect(compiled.samples == [StoredSample(header: 0, endOffset: 0), StoredSample(header: 1, endOffset: 0)])
        #expect(compiled.samples.map(compiled.name(of:)) == ["/f/t.sf2#low", "/f/t.sf2#high"])
        // The first zone's sample's rate, a rate sound cards play.
        #expect(compiled.sampleRate == 48_000 && compiled.warnings.isEmpty)
        #expect(try compile(rate: 44_100).sampleRate == 44_100)
        let instrument = compiled.instrument(
            places: [
                StoredPlace(index: 4, firstWord: 0, frameCount: 480),
                StoredPlace(index: 9, firstWord: 480, frameCount: 480),
            ], overriding: nil)
        #expect(instrument.regions.map(\.sampleIndex) == [4, 9])
        #expect(instrument.regions.map(\.keyRange) == [48...65, 66...96])
        #expect(instrument.restrikeReleases && instrument.chokesWithinChannel && instrument.followsPanController)
        #expect(instrument.followsPitchBend && instrument.bellCount == 0)
        #expect(instrument.pitchBendReach == 127.0 / 128) // FluidSynth's wheel: 12,700 cents × range / 128
    }

    @Test func presetsAreChosenByNumberOrByName() throws {
        #expect(try compile(preset: PresetChoice(name: "bells F", bank: nil)).presetName == "128:3 Bells far")
        #expect(try compile(preset: PresetChoice(bank: 128, program: 3)).presetName == "128:3 Bells far")
        let ambiguous = refusal(PresetChoice(name: "bell", bank: nil))
        #expect(ambiguous?.message == "\"bell\" names 2 presets")
        #expect(ambiguous?.fix == "give more of the name, or the number: 0:14 Bells, 128:3 Bells far")
        let missing = refusal(PresetChoice(bank: 0, program: 5))
        #expect(missing?.file == "/f/t.sf2" && missing?.message == "no preset at bank 0, program 5")
        #expect(
            missing?.fix == "choose one the font has (bellkeys check --map /f/t.sf2 lists them; bank 0 has 14 Bells)")
    }

    @Test func aRateNoSoundCardPlaysIsSaid() throws {
        var slow = testFont()
        slow.samples[0].rate = 4_000
        let compiled = try compile(slow)
        #expect(compiled.sampleRate == 44_100)
        #expect(
            compiled.warnings == [
                "/f/t.sf2: preset 0:14 Bells: its first sample's rate, 4000 Hz, is not one to play at: playing at 44100 Hz"
            ])
        // Asked for a rate: no warning.
        #expect(try compile(slow, rate: 48_000).warnings.isEmpty)
    }
}

/// A zone's reverb send, as FluidSynth adds it to CC91's: in the units of CC91's part (1 at
/// CC91 128, FluidSynth's 20 %), instrument and preset zones summed, at most FluidSynth's 100 %;
/// a chorus send is said to be left out.
@Suite struct SoundFontSends {
    @Test func aZonesReverbSendIsItsRegionsAndTheChorusIsSaidLeftOut() throws {
        for (instrumentSend, presetSend, expected) in [(150, 0, 0.75), (100, 50, 0.75), (1_200, 0, 5), (-100, 0, 0)]
            as [(Int, Int, Float)]
        {
            var builder = testFont()
            builder.instruments[0].zones[1].generators += [(.reverbEffectsSend, instrumentSend)]
            if presetSend != 0 { builder.presets[0].zones[0].generators += [(.reverbEffectsSend, presetSend)] }
            #expect(try firstZoneRegions(builder)[0].reverbSend == expected, "\(instrumentSend) + \(presetSend)")
        }
        #expect(try firstZoneRegions(testFont())[0].reverbSend == 0)

        var chorus = testFont()
        chorus.instruments[0].zones[1].generators += [(.chorusEffectsSend, 200)]
        let font = try parseSoundFont(SoundFontBytes(chorus.bytes()), file: "/f/t.sf2")
        let compiled = try compileSoundFont(path: "/f/t.sf2", font: font, preset: nil, sampleRate: nil)
        #expect(
            compiled.warnings == ["/f/t.sf2: preset 0:14 Bells: its chorus send is left out: bellkeys has no chorus"])
        let instrument = compiled.instrument(
            places: [
                StoredPlace(index: 0, firstWord: 0, frameCount: 480),
                StoredPlace(index: 1, firstWord: 480, frameCount: 480),
            ], overriding: nil)
        // CC91 by FluidSynth's straight line, from 0 (no controller default).
        #expect(instrument.linearReverbSend && instrument.controllerDefaults[91] == nil)
    }
}
