import BellkeysFormats
import BellkeysModel
import Foundation
import FuzzChecks
import Testing

/// The regions of the first zone of `builder`'s first preset, its sample of 480 frames at
/// 48 kHz in a bank at 48 kHz: what most reader tests look at.
func firstZoneRegions(_ builder: SoundFontBuilder) throws -> [Region] {
    let font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
    return soundFontRegions(
        voiceZones(of: font.presets[0], in: font)![0], header: font.samples[0], sampleIndex: 0, firstWord: 0,
        frameCount: 480, sampleRate: 48_000, bankRate: 48_000)
}

/// A font of two samples (a looped one at key 60, another at key 72 with a -10 cent
/// correction), one instrument of two zones under a global zone, and two presets.
func testFont() -> SoundFontBuilder {
    let sine = (0..<480).map { Int16(10_000 * sin(2 * Double.pi * 10 * Double($0) / 480)) }
    return SoundFontBuilder(
        samples: [
            .init(name: "low", frames: sine, rate: 48_000, root: 60, loop: 96..<480),
            .init(name: "high", frames: sine, rate: 44_100, root: 72, correction: -10),
        ],
        instruments: [
            .init(
                name: "bells",
                zones: [
                    .init([(.initialAttenuation, 100), (.releaseVolEnv, 1200)], target: nil),
                    .init(
                        [(.keyRange, SoundFontBuilder.range(0, 65)), (.sampleModes, 1), (.pan, -250)],
                        target: 0),
                    .init(
                        [
                            (.keyRange, SoundFontBuilder.range(66, 127)), (.velRange, SoundFontBuilder.range(1, 100)),
                            (.initialAttenuation, 50), (.coarseTune, 1), (.fineTune, -20),
                        ], target: 1),
                ])
        ],
        presets: [
            .init(
                name: "Bells", program: 14,
                zones: [.init([(.keyRange, SoundFontBuilder.range(48, 96)), (.initialAttenuation, 20)], target: 0)]),
            .init(
                name: "Bells far", bank: 128, program: 3,
                zones: [.init([(.pan, 100), (.overridingRootKey, 50), (.fineTune, 7)], target: 0)]),
        ])
}

@Suite struct SoundFontReading {
    @Test func presetsInstrumentsAndSamplesAreRead() throws {
        let font = try parseSoundFont(SoundFontBytes(testFont().bytes()), file: "t.sf2")
        #expect(font.name == "bellkeys test font")
        #expect(font.versionMajor == 2 && font.versionMinor == 4)
        #expect(font.presets.map(\.name) == ["Bells", "Bells far"])
        #expect(font.presets.map(\.bank) == [0, 128])
        #expect(font.presets.map(\.program) == [14, 3])
        #expect(font.instruments.count == 1)
        #expect(font.instruments[0].global?.generators[48] == 100)
        #expect(font.instruments[0].zones.map(\.target) == [0, 1])
        // The terminal record (EOS) is kept as the last header.
        #expect(font.samples.count == 3)
        #expect(font.samples[1].start == 480 + 46 && font.samples[1].end == 2 * 480 + 46)
        #expect(font.samples[0].loopStart == 96 && font.samples[0].loopEnd == 480)
        #expect(font.samples[1].pitchCorrection == -10 && font.samples[1].sampleRate == 44_100)
        #expect(font.sampleData.count == 2 * (2 * 480 + 2 * 46))
    }

    /// Section 9.4: the instrument's value (local over global over default), plus the preset's;
    /// ranges are intersected; instrument-only generators in a preset are dropped.
    @Test func presetGeneratorsAddToTheInstrumentsAndRangesMeet() throws {
        let font = try parseSoundFont(SoundFontBytes(testFont().bytes()), file: "t.sf2")
        let zones = voiceZones(of: font.presets[0], in: font)!
        #expect(zones.count == 2)
        #expect(zones[0].keyRange == 48...65 && zones[1].keyRange == 66...96)
        #expect(zones[1].velocityRange == 1...100)
        #expect(zones[0][.initialAttenuation] == 120) // global 100 + preset 20
        #expect(zones[1][.initialAttenuation] == 70) // local 50 replaces global, + 20
        #expect(zones[0][.releaseVolEnv] == 1200 && zones[1][.releaseVolEnv] == 1200)
        #expect(zones[0][.attackVolEnv] == -12_000 && zones[0][.scaleTuning] == 100)
        let far = voiceZones(of: font.presets[1], in: font)!
        #expect(far[0][.pan] == -150)
        #expect(far[0][.overridingRootKey] == -1) // dropped at preset level
        #expect(far[1][.fineTune] == -13)
        #expect(far[0].modulators == defaultSoundFontModulators)
    }

    /// RIFF pads a chunk of odd size; FluidSynth reads no pad byte, and MuseScore's fonts have
    /// none. Both read.
    @Test func chunksOfOddSizeReadWithOrWithoutAPadByte() throws {
        for padded in [true, false] {
            var builder = testFont()
            builder.name = "odd name" // 8 characters and a zero: 9 bytes
            builder.oddNamePadded = padded
            let font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
            #expect(font.name == "odd name" && font.presets.count == 2, "padded: \(padded)")
        }
    }

    /// Ranges no key or velocity can meet make no zone: a velocity range of 128 (it used to
    /// trap, building 128...127) and a reversed key range (FluidSynth never matches one).
    @Test func rangesNothingMeetsMakeNoZone() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].generators = [
            (.keyRange, SoundFontBuilder.range(0, 127)), (.velRange, 128 | 128 << 8),
        ]
        var font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
        #expect(voiceZones(of: font.presets[0], in: font)!.map(\.sample) == [1])
        builder = testFont()
        builder.instruments[0].zones[2].generators = [(.keyRange, SoundFontBuilder.range(70, 60))]
        font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
        #expect(voiceZones(of: font.presets[0], in: font)!.map(\.sample) == [0])
    }

    /// The shortest release is FluidSynth's 16 ms (-7200 tc), even for the specification's
    /// "none" (-32768); a hold of -32768 is none at all.
    @Test func noneIsTheShortestTimeExceptForHold() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].generators += [(.releaseVolEnv, -32_768), (.holdVolEnv, -32_768)]
        let region = try firstZoneRegions(builder)[0]
        // 1 + floor(48000 x 2^-6 / 64) = 12 blocks, over 90 dB of the engine's 96.
        #expect(abs(region.envelope!.release - 12 * 64 / 48_000 * 90 / 96) < 1e-12)
        #expect(region.envelope!.hold == 0)
    }

    @Test func aKeyRangeThatIsNotFirstIsDropped() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].generators = [(.pan, 10), (.keyRange, SoundFontBuilder.range(0, 10))]
        let font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
        #expect(font.instruments[0].zones[0].range(.keyRange) == nil)
        #expect(voiceZones(of: font.presets[0], in: font)![0].keyRange == 48...96)
    }

    /// What a voice of each zone plays: the arithmetic of SoundFont 2.04 as FluidSynth does it.
    @Test func zonesBecomeRegionsWithFluidSynthsArithmetic() throws {
        let font = try parseSoundFont(SoundFontBytes(testFont().bytes()), file: "t.sf2")
        let zones = voiceZones(of: font.presets[0], in: font)!
        let low = soundFontRegions(
            zones[0], header: font.samples[0], sampleIndex: 0, firstWord: 0, frameCount: 480, sampleRate: 48_000,
            bankRate: 48_000)
        #expect(low.count == 1)
        let r = low[0]
        #expect(r.pitchKeycenter == 60 && r.pitchKeytrackCents == 100 && r.tuneCents == 0)
        // 120 cB read at 0.4: 4.8 dB.
        #expect(abs(20 * log10(Double(r.gain)) + 4.8) < 1e-5)
        #expect(r.pan == -0.5)
        #expect(r.loopMode == .continuous && r.loopStart == 96 && r.loopEnd == 479)
        // FluidSynth's envelope moves once a block (64 frames, here at 48 kHz): release 1200 tc
        // (2 s over 96 dB) lasts 1 + 1500 blocks, over 90 dB in the engine's envelope; the
        // specification's 1 ms default delay is none, its 1 ms attack and hold one block each.
        #expect(abs(r.envelope!.release - 1501 * 64 / 48_000 * 90 / 96) < 1e-12)
        #expect(r.envelope!.delay == 0)
        #expect(abs(r.envelope!.attack - 64.0 / 48_000) < 1e-12)
        #expect(abs(r.envelope!.hold - 64.0 / 48_000) < 1e-12)
        #expect(r.velocityGains![64] == Float(0.25) && r.velocityGains![0] == 0)
        #expect(abs(Double(r.velocityGains![127]) - pow(127.0 / 128, 2)) < 1e-6)
        #expect(r.filter == nil)

        let high = soundFontRegions(
            zones[1], header: font.samples[1], sampleIndex: 1, firstWord: font.samples[1].start, frameCount: 480,
            sampleRate: 44_100, bankRate: 48_000)[0]
        // Coarse +1, fine -20, correction -10, and 44.1 kHz played at 48 kHz.
        #expect(abs(high.tuneCents - (100 - 20 - 10 + 1200 * log2(44_100.0 / 48_000))) < 1e-9)
        #expect(high.pitchKeycenter == 72 && high.loopMode == .noLoop)
    }

    @Test func envelopesFollowTheKeyAndFiltersKeepFluidSynthsGain() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].generators += [
            (.keynumToVolEnvDecay, 100), (.decayVolEnv, 0), (.sustainVolEnv, 500), (.initialFilterFc, 6900),
            (.initialFilterQ, 120), (.exclusiveClass, 3),
        ]
        let regions = try firstZoneRegions(builder)
        #expect(regions.map(\.keyRange) == (48...65).map { $0...$0 })
        for region in regions {
            let key = region.keyRange.lowerBound
            let blocks = (exp2(Double(100 * (60 - key)) / 1200) * 48_000 / 64).rounded()
            let expected = blocks * 64 / 48_000 * 90 / 96
            #expect(abs(region.envelope!.decay - expected) < 1e-12, "key \(key)")
            // 500 cB of sustain: 48 dB below full (FluidSynth's 0.96).
            #expect(abs(20 * log10(region.envelope!.sustain) + 48) < 1e-9)
            #expect(region.filter == .lowPass2 && region.resonance == 12)
            #expect(abs(region.cutoff - 8.175_798_915_643_707 * exp2(5.75)) < 1e-9)
            // 4.8 dB of attenuation, and half the 12 dB resonance.
            #expect(abs(20 * log10(Double(region.gain)) + 4.8 + 6) < 1e-5)
            #expect(region.group == 3 && region.offBy == 3)
        }
    }

    /// The modulation envelope: its times as FluidSynth clips them (in seconds: the engine counts
    /// them in ticks), hold and decay following the key from 60 (a region per key), FluidSynth's
    /// sustain level (1 − 0.001 × 600 in its single-precision 0.001), and where it goes. A zone
    /// whose envelope moves the cutoff gets the filter, its cutoff not clipped to 0.45 of the rate
    /// (the engine clips the moving one).
    @Test func theModulationEnvelopeIsFluidSynths() throws {
        var builder = testFont()
        builder.instruments[0].zones[1].generators += [
            (.modEnvToFilterFc, -2400), (.modEnvToPitch, 50), (.delayModEnv, -32_768), (.attackModEnv, -12_000),
            (.holdModEnv, 9_000), (.decayModEnv, 1_200), (.keynumToModEnvDecay, 100), (.sustainModEnv, 600),
            (.releaseModEnv, -2_400),
        ]
        let regions = try firstZoneRegions(builder)
        #expect(regions.map(\.keyRange) == (48...65).map { $0...$0 })
        for region in regions {
            let key = region.keyRange.lowerBound
            let m = try #require(region.modulation)
            #expect(m.envelopeToPitchCents == 50 && m.envelopeToCutoffCents == -2_400)
            // (A delay of -32,768 is 1 ms: FluidSynth clips it to -12,000 before it converts it.)
            #expect(m.envelope.delay == exp2(-10.0) && m.envelope.attack == exp2(-10.0))
            #expect(m.envelope.hold == exp2(5_000.0 / 1_200), "hold clipped to 5,000 tc")
            #expect(m.envelope.decay == exp2(Double(1_200 + 100 * (60 - key)) / 1_200), "key \(key)")
            #expect(m.envelope.sustain == 1 - 0.001_000_000_047_497_451_3 * 600)
            #expect(m.envelope.release == 0.25)
            // The filter at its default cutoff, 13,500 cents above 8.176 Hz (19.9 kHz), not 0.45
            // of 48 kHz (21.6 kHz); FluidSynth's moving cutoff starts there too.
            #expect(region.filter == .lowPass2 && abs(region.cutoff - 8.175_798_915_643_707 * exp2(11.25)) < 1e-9)
        }
        // The LFOs: a vibrato of 50 cents at 16.35 Hz (1,200 cents above 8.176 Hz; 1,250.9 is
        // not a generator's value, but 1,250 cents are cut to whole cents as FluidSynth does)
        // after half a second, the modulation LFO at its defaults moving the filter (its delay of
        // -32,768 is 1 ms, as FluidSynth clips it before it converts it: not "none").
        builder.instruments[0].zones[1].generators += [
            (.vibLfoToPitch, 50), (.freqVibLFO, 1_200), (.delayVibLFO, -1_200), (.modLfoToFilterFc, 300),
            (.delayModLFO, -32_768),
        ]
        let lfo = try #require(try firstZoneRegions(builder)[0].modulation)
        #expect(lfo.vibratoLFOToPitchCents == 50 && lfo.modulationLFOToCutoffCents == 300)
        #expect(lfo.vibratoLFO == ModulationLFO(delay: 0.5, frequency: 8.175_798_915_643_707 * 2))
        #expect(lfo.modulationLFO == ModulationLFO(delay: exp2(-10.0), frequency: 8.175_798_915_643_707))
        // Without a depth the envelope is nothing: no filter; the modulation is FluidSynth's
        // default vibrato, of depth 0 until the mod wheel or channel pressure deepens it.
        let plain = try firstZoneRegions(testFont())
        #expect(plain.allSatisfy { $0.filter == nil && $0.modulation?.vibratoLFOToPitchCents == 0 })
        #expect(
            plain.allSatisfy { $0.modulation?.envelopeToCutoffCents == 0 && $0.modulation?.envelopeToPitchCents == 0 })
        let vibrato = plain[0].noteModulators?.modulators.map { ($0.source, $0.amount, $0.destination) }
        #expect(vibrato?.map(\.0) == [.channelPressure, .controller(1)])
        #expect(vibrato?.allSatisfy { $0.1 == 50 && $0.2 == .vibratoLFOToPitchCents } == true)
    }

    /// FluidSynth plays whole cents, its floating-point sum cut down: with root key 84 and a
    /// -18 cent correction, 100 x (key - 84.18) + 8418 falls just under a whole cent for keys 3
    /// to 81 (in IEEE doubles, as FluidSynth computes it), which then play a cent flat.
    @Test func pitchIsFluidSynthsWholeCents() throws {
        var builder = testFont()
        builder.samples[0].root = 84
        builder.samples[0].correction = -18
        builder.presets[0].zones[0].generators = []
        let regions = try firstZoneRegions(builder)
        #expect(regions.map(\.keyRange) == [0...2, 3...65])
        #expect(regions.map(\.tuneCents) == [-18, -19])
        #expect(regions.allSatisfy { $0.pitchKeycenter == 84 && $0.pitchKeytrackCents == 100 })
    }

    /// A modulator that replaces the default velocity curve: the instrument's amount replaces
    /// the default's, a preset's adds to it.
    @Test func velocityModulatorsShapeTheVelocityGains() throws {
        var builder = testFont()
        let linear = SoundFontModulator(source: 0x0102, destination: 48, amount: 480, amountSource: 0, transform: 0)
        builder.instruments[0].zones[1].modulators = [linear]
        builder.presets[0].zones[0].modulators = [
            SoundFontModulator(source: 0x0102, destination: 48, amount: 120, amountSource: 0, transform: 0)
        ]
        let font = try parseSoundFont(SoundFontBytes(builder.bytes()), file: "t.sf2")
        let zone = voiceZones(of: font.presets[0], in: font)![0]
        let gains = soundFontVelocityGains(zone)
        for v in [1, 32, 64, 100, 127] {
            // The concave default at 960 cB, and the linear one at 480 + 120 = 600 cB.
            let concave = -400 * log10(Double(v) / 128)
            let linearCentibels = 600 * (1 - Double(v) / 128)
            let expected = pow(10, -(concave + linearCentibels) / 200)
            #expect(abs(Double(gains[v]) / expected - 1) < 1e-5, "velocity \(v)")
        }
        #expect(modulatorLeftOut(linear) == nil)
        let toPitch = SoundFontModulator(source: 0x0081, destination: 52, amount: 50, amountSource: 0, transform: 0)
        #expect(modulatorLeftOut(toPitch) == nil)
        let toPan = SoundFontModulator(source: 0x0081, destination: 17, amount: 50, amountSource: 0, transform: 0)
        #expect(modulatorLeftOut(toPan) == "a modulator from CC1 to pan (amount 50) is left out")
    }
}

@Suite struct SoundFontProblems {
    func problem(_ bytes: [UInt8]) -> InstrumentProblem? {
        do {
            _ = try parseSoundFont(SoundFontBytes(bytes), file: "t.sf2")
            return nil
        } catch {
            return error.problems.first
        }
    }

    @Test func aTruncatedFontNamesTheChunkAndTheByte() throws {
        let bytes = testFont().bytes()
        let cut = try #require(problem(Array(bytes.prefix(bytes.count - 10))))
        #expect(cut.path == "RIFF" && cut.byte == 4)
        #expect(cut.message == "the header says the file holds \(bytes.count) bytes, but it has \(bytes.count - 10)")
        #expect(
            cut.description
                == "t.sf2: RIFF: at byte 4: the header says the file holds \(bytes.count) bytes, but it has \(bytes.count - 10)\n    fix: \(cut.fix)"
        )
        #expect(cut.fix.contains("cut short"))
        #expect(
            problem(Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WAVE".utf8))?.message.contains("not a SoundFont") == true
        )
        let short = problem([1, 2, 3])
        #expect(short?.byte == 0 && short?.message == "the file is 3 bytes, too short for a SoundFont")
    }

    @Test func brokenRecordsAreNamed() throws {
        // A zone that names an instrument that is not there.
        var builder = testFont()
        builder.presets[0].zones[0].target = 7
        let missing = try #require(problem(builder.bytes()))
        #expect(missing.path == "pdta/pgen")
        #expect(missing.message.hasSuffix("a zone names instrument 7, but there are only 1"))
        // A shdr chunk that is not whole records.
        var bytes = testFont().bytes()
        let shdr = try #require(findTag(bytes, "shdr"))
        bytes[shdr + 4] &+= 2
        let odd = try #require(problem(bytes))
        #expect(odd.path == "pdta/shdr" || odd.path.hasPrefix("pdta"))
        #expect(odd.byte != nil && odd.description.contains(": at byte \(odd.byte ?? -1): "))
    }

    /// Every byte of a small font set to 0xFF, 0x00 or 0x80 in turn, and every length cut: the
    /// reader returns or names the chunk and byte, and the regions it makes stay in range.
    @Test func everyDamagedByteIsReadOrNamed() {
        let bytes = testFont().bytes()
        var broken: [String] = []
        for i in bytes.indices {
            for value: UInt8 in [0xFF, 0x00, 0x80] {
                var damaged = bytes
                damaged[i] = value
                broken += soundFontViolations(damaged).map { "byte \(i) = \(value): \($0)" }
            }
        }
        for length in stride(from: 0, to: bytes.count, by: 7) {
            broken += soundFontViolations(Array(bytes.prefix(length))).map { "cut at \(length): \($0)" }
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
    }
}

/// The offset of the first `tag` in `bytes`.
func findTag(_ bytes: [UInt8], _ tag: String) -> Int? {
    let t = Array(tag.utf8)
    return (0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == t }
}
