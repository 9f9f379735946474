import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysSystem
import CSndFile
import EngineTestSupport
import Foundation
import FuzzChecks
import Testing

/// A 1 kHz sine at 48 kHz (10 cycles in 480 frames) at `level` of full scale, as 16-bit words.
private func sineWords(level: Double = 0.3) -> [Int16] {
    (0..<480).map { Int16((32_767 * level * sin(2 * Double.pi * 10 * Double($0) / 480)).rounded()) }
}

/// A font with a looped 1 kHz sine at root key 60 (program 0), the same sine as a linked
/// stereo pair, the right side an octave up (program 1), and a sample no preset plays.
private func writeFont(_ folder: String, lowBytes: [UInt8]? = nil, chorusOnRight: Bool = false) throws -> String {
    let sine = sineWords()
    let octave = (0..<480).map { Int16((32_767 * 0.3 * sin(2 * Double.pi * 20 * Double($0) / 480)).rounded()) }
    let builder = SoundFontBuilder(
        samples: [
            .init(name: "sine", frames: sine, loop: 0..<480, lowBytes: lowBytes),
            .init(name: "left", frames: sine, loop: 0..<480, type: 4, link: 2),
            .init(name: "right", frames: octave, loop: 0..<480, type: 2, link: 1),
            .init(name: "unused", frames: [Int16](repeating: 1000, count: 4_800)),
        ],
        instruments: [
            .init(name: "sine", zones: [.init([(.sampleModes, 1), (.initialAttenuation, 150)], target: 0)]),
            .init(
                name: "pair",
                zones: [
                    .init([(.sampleModes, 1), (.pan, -500)], target: 1),
                    .init(
                        [(.sampleModes, 1), (.pan, 500)] + (chorusOnRight ? [(.chorusEffectsSend, 100)] : []), target: 2
                    ),
                ]),
            .init(name: "unused", zones: [.init(target: 3)]),
        ],
        presets: [
            .init(name: "Sine", program: 0, zones: [.init([(.coarseTune, 2)], target: 0)]),
            .init(name: "Pair", program: 1, zones: [.init(target: 1)]),
            .init(name: "Unused", program: 2, zones: [.init(target: 2)]),
        ])
    let path = folder + (chorusOnRight ? "/chorus.sf2" : "/test.sf2")
    try Data(builder.bytes()).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite struct SoundFontInstruments {
    /// Every key of the preset sounds at its pitch within 1 cent (two semitones of coarse tune
    /// up), at the level the font gives: 150 cB read at 0.4 (6 dB), velocity 127 on the concave
    /// curve ((127/128)²), centred (the engine's pan law: full level on each side).
    @Test func aPresetPlaysAtItsPitchAndLevel() throws {
        let path = try writeFont(temporaryFolder())
        let loaded = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 0))
        #expect(loaded.preset == "0:0 Sine")
        #expect(loaded.bank.count == 1) // only the preset's sample is read
        #expect(loaded.sampleRate == 48_000)
        for key in [36, 58, 60, 67, 84, 96] {
            let (left, right) = strike(loaded, key: key)
            let pitch = 1000 * pow(2, Double(key + 2 - 60) / 12)
            let error = cents(measuredFrequency(left, 2_400..<24_000), pitch)
            #expect(abs(error) < 1, "key \(key): \(error) cents")
            let rms = power(Array(left[2_400...])).squareRoot()
            let wanted = 0.3 / 2.0.squareRoot() * pow(10, -6.0 / 20) * pow(127.0 / 128, 2)
            #expect(abs(20 * log10(rms / wanted)) < 0.05, "key \(key): \(20 * log10(rms / wanted)) dB")
            #expect(left == right)
        }
    }

    /// A linked pair plays as FluidSynth plays it: the left sample hard left, the right hard
    /// right. Its two zones differ only in sample and pan, so one stereo voice plays both.
    @Test func aStereoPairPlaysEachSideOnItsOwnChannel() throws {
        let path = try writeFont(temporaryFolder())
        let loaded = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 1))
        #expect(loaded.bank.count == 1 && loaded.bank.channelCounts == [2] && loaded.instrument.regions.count == 1)
        let (left, right) = strike(loaded, key: 64)
        let pitch = 1000 * pow(2, 4.0 / 12)
        #expect(abs(cents(measuredFrequency(left, 2_400..<24_000), pitch)) < 1)
        #expect(abs(cents(measuredFrequency(right, 2_400..<24_000), 2 * pitch)) < 1)
        // Hard pan: the far side silent.
        #expect(magnitude(left[2_400...], hertz: 2 * pitch, sampleRate: 48_000) < 1e-4)
        #expect(magnitude(right[2_400...], hertz: pitch, sampleRate: 48_000) < 1e-4)
    }

    /// The stereo voice of a pair sounds as its two mono voices do: the same pair with a
    /// generator bellkeys does not play (a chorus send) on one side only stays two voices, and
    /// the two renders agree to float rounding.
    @Test func aPairAsOneVoiceSoundsAsTwo() throws {
        let folder = temporaryFolder()
        let path = try writeFont(folder)
        let paired = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 1))
        let unpaired = try loadInstrument(
            path: try writeFont(folder, chorusOnRight: true), preset: PresetChoice(bank: 0, program: 1))
        #expect(paired.instrument.regions.count == 1 && unpaired.instrument.regions.count == 2)
        for key in [52, 64, 77] {
            let one = strike(paired, key: key), two = strike(unpaired, key: key)
            let worst = zip(one.left + one.right, two.left + two.right).map { abs($0 - $1) }.max()!
            #expect(worst < 1e-6, "key \(key): \(worst)")
            #expect(power(one.left) > 0.001 && power(one.right) > 0.001)
        }
    }

    /// CC10 pans a preset's channel, directly and through a map (FluidSynth's pan modulator).
    @Test func panControllerMovesThePreset() throws {
        let folder = temporaryFolder()
        let path = try writeFont(folder)
        write(#"{"soundfont": "test.sf2"}"#, to: folder + "/map.json")
        for loaded in [try loadInstrument(path: path), try loadInstrument(path: folder + "/map.json")] {
            let engine = unlimitedEngine(loaded)
            engine.enqueue(.control(frame: 0, controller: 10, value: 0))
            engine.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
            let (left, right) = renderStereo(engine, 12_000)
            #expect(power(Array(left[4_800...])) > 0.001)
            #expect(right[4_800...].allSatisfy { $0 == 0 })
        }
    }

    /// An exclusive class spares the voices of its own note-on (FluidSynth's rule): two zones of
    /// class 1 on one key, one hard left and one hard right over samples of different lengths
    /// (so not one stereo voice), both ring; the next strike cuts both off.
    @Test func anExclusiveClassSparesItsOwnNoteOn() throws {
        let sine = sineWords()
        let builder = SoundFontBuilder(
            samples: [
                .init(name: "a", frames: sine, loop: 0..<480), .init(name: "b", frames: sine + sine, loop: 0..<960),
            ],
            instruments: [
                .init(
                    name: "kit",
                    zones: [
                        .init([(.sampleModes, 1), (.pan, -500), (.exclusiveClass, 1)], target: 0),
                        .init([(.sampleModes, 1), (.pan, 500), (.exclusiveClass, 1)], target: 1),
                    ])
            ],
            presets: [.init(name: "Kit", program: 0, zones: [.init(target: 0)])])
        let folder = temporaryFolder()
        try Data(builder.bytes()).write(to: URL(fileURLWithPath: folder + "/kit.sf2"))
        let loaded = try loadInstrument(path: folder + "/kit.sf2")
        #expect(loaded.instrument.regions.count == 2 && loaded.bank.count == 2)
        let engine = unlimitedEngine(loaded)
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.noteOn(frame: 24_000, note: 67, velocity: 127))
        let (left, right) = renderStereo(engine, 48_000)
        // Both sides ring through the first half second (a cut would end within 0.11 s).
        #expect(power(Array(left[12_000..<24_000])) > 0.001 && power(Array(right[12_000..<24_000])) > 0.001)
        // The second strike's two voices sound at key 67's pitch alone once the first have faded.
        let pitch = 1000 * pow(2, 7.0 / 12)
        #expect(abs(cents(measuredFrequency(left, 36_000..<48_000), pitch)) < 1)
        #expect(abs(cents(measuredFrequency(right, 36_000..<48_000), pitch)) < 1)
    }

    /// An exclusive class chokes on its own channel only (FluidSynth's rule): a strike of the
    /// class on channel 1 leaves channel 0's note ringing, where the same strike on channel 0
    /// cuts it off.
    @Test func anExclusiveClassChokesOnItsOwnChannel() throws {
        let sine = sineWords()
        let builder = SoundFontBuilder(
            samples: [.init(name: "a", frames: sine, loop: 0..<480)],
            instruments: [
                .init(name: "kit", zones: [.init([(.sampleModes, 1), (.exclusiveClass, 1)], target: 0)])
            ],
            presets: [.init(name: "Kit", program: 0, zones: [.init(target: 0)])])
        let folder = temporaryFolder()
        try Data(builder.bytes()).write(to: URL(fileURLWithPath: folder + "/kit.sf2"))
        let loaded = try loadInstrument(path: folder + "/kit.sf2")
        let fifth = 1000 * pow(2, 7.0 / 12)
        for secondChannel in [0, 1] {
            let engine = unlimitedEngine(loaded)
            engine.enqueue(.noteOn(frame: 0, channel: 0, note: 60, velocity: 127))
            engine.enqueue(.noteOn(frame: 24_000, channel: secondChannel, note: 67, velocity: 127))
            let (left, _) = renderStereo(engine, 48_000)
            let first = magnitude(left[36_000..<48_000], hertz: 1000, sampleRate: 48_000)
            let second = magnitude(left[36_000..<48_000], hertz: fifth, sampleRate: 48_000)
            #expect(second > 0.05, "channel \(secondChannel): the second note sounds (\(second))")
            if secondChannel == 0 {
                #expect(first < 0.005 * second, "the first note is cut off on its own channel (\(first))")
            } else {
                #expect(abs(first - second) < 0.01 * second, "channel 0 rings on (\(first) against \(second))")
            }
        }
    }

    /// A key struck again while it is held lets go of its ringing voice first, as a note-off
    /// would (FluidSynth's rule): loud, then soft on the same key with no note-off between,
    /// and 50 ms on only the soft strike sounds, at its level struck alone. Under the sustain pedal the
    /// loud one rings on (FluidSynth 2.3.1 measured alike: a looped flute, struck again under
    /// the pedal, held both voices until the pedal came up).
    @Test func aKeyStruckAgainLetsGoOfItsRingingVoice() throws {
        let path = try writeFont(temporaryFolder())
        let loaded = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 0))
        #expect(loaded.instrument.restrikeReleases)
        let alone = unlimitedEngine(loaded)
        alone.enqueue(.noteOn(frame: 24_000, note: 60, velocity: 64))
        let soft = power(Array(renderStereo(alone, 48_000).left[26_400...])).squareRoot()
        for pedal in [false, true] {
            let engine = unlimitedEngine(loaded)
            engine.enqueue(.control(frame: 0, controller: 64, value: pedal ? 127 : 0))
            engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
            engine.enqueue(.noteOn(frame: 24_000, note: 60, velocity: 64))
            let (left, _) = renderStereo(engine, 48_000)
            let level = 20 * log10(power(Array(left[26_400...])).squareRoot() / soft)
            if pedal {
                #expect(level > 6, "under the pedal both ring: \(level) dB over the soft strike")
            } else {
                #expect(abs(level) < 0.05, "the soft strike alone: \(level) dB")
            }
        }
    }

    /// Three zones alike but for their pan: one pair becomes a stereo voice, the third stays
    /// a voice of its own (it used to pair with the left side again, which then played twice).
    @Test func aSideIsPairedOnce() throws {
        let sine = sineWords()
        func font(_ path: String, thirdChorus: Bool) throws -> LoadedInstrument {
            let builder = SoundFontBuilder(
                samples: [
                    .init(name: "l", frames: sine, loop: 0..<480), .init(name: "r", frames: sine, loop: 0..<480),
                    .init(name: "r2", frames: sine, loop: 0..<480),
                ],
                instruments: [
                    .init(
                        name: "three",
                        zones: [
                            .init([(.sampleModes, 1), (.pan, -500)], target: 0),
                            .init([(.sampleModes, 1), (.pan, 500)], target: 1),
                            .init(
                                [(.sampleModes, 1), (.pan, 500)] + (thirdChorus ? [(.chorusEffectsSend, 5)] : []),
                                target: 2),
                        ])
                ],
                presets: [.init(name: "Three", program: 0, zones: [.init(target: 0)])])
            try Data(builder.bytes()).write(to: URL(fileURLWithPath: path))
            return try loadInstrument(path: path)
        }
        let folder = temporaryFolder()
        let paired = try font(folder + "/a.sf2", thirdChorus: false)
        let apart = try font(folder + "/b.sf2", thirdChorus: true)
        #expect(paired.instrument.regions.count == 2)
        let one = strike(paired, key: 60), two = strike(apart, key: 60)
        let worst = zip(one.left + one.right, two.left + two.right).map { abs($0 - $1) }.max()!
        #expect(worst < 1e-6)
    }

    /// `sm24`: 24-bit frames are kept exactly when they fit 16 bits below their peak.
    @Test func twentyFourBitSamplesKeepTheirLowByte() throws {
        let low = (0..<480).map { UInt8(truncatingIfNeeded: $0 * 37) }
        let path = try writeFont(temporaryFolder(), lowBytes: low)
        let font = try parseSoundFont(
            SoundFontBytes(Array(try Data(contentsOf: URL(fileURLWithPath: path)))), file: path)
        #expect(font.sampleLowBytes != nil)
        let loaded = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 0))
        let words = sineWords()
        var worst = 0.0
        for i in 0..<480 {
            let exact = Double(Int32(words[i]) << 8 | Int32(low[i])) / 8_388_608
            worst = max(worst, abs(Double(loaded.bank.value(sample: 0, frame: i)) - exact))
        }
        // The peak (0.3 of full scale) needs 22 bits: kept to 16, the error is under 2^-16.
        #expect(worst <= exp2(-16))
        #expect(worst > 0)
    }

    @Test func aMissingPresetIsNamedWithThoseTheBankHas() throws {
        let path = try writeFont(temporaryFolder())
        #expect {
            try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 9))
        } throws: { error in
            let text = (error as? InstrumentError)?.description ?? ""
            return text.contains("no preset at bank 0, program 9")
                && text.contains("bank 0 has 0 Sine, 1 Pair, 2 Unused")
        }
    }

    /// A map that names a preset: its fields apply, the font's samples are found relative to it;
    /// its CC91 is the font's (FluidSynth's line) unless it has keys of its own (a map's).
    @Test func aMapNamesAPreset() throws {
        let folder = temporaryFolder()
        _ = try writeFont(folder)
        write(#"{"soundfont": "test.sf2", "program": 1, "pitchBend": false}"#, to: folder + "/map.json")
        let loaded = try loadInstrument(path: folder + "/map.json")
        #expect(loaded.preset == "0:1 Pair")
        #expect(loaded.instrument.regions.count == 1)
        #expect(!loaded.instrument.followsPitchBend)
        #expect(loaded.instrument.linearReverbSend)
        try writeWAV([Float](repeating: 0.25, count: 480), to: folder + "/bell.wav")
        write(
            #"{"soundfont": "test.sf2", "program": 1, "keys": [{"note": 30, "sample": "bell.wav"}]}"#,
            to: folder + "/keys.json")
        #expect(try !loadInstrument(path: folder + "/keys.json").instrument.linearReverbSend)
        write(#"{"soundfont": "test.sf2", "instrument": "x.sfz"}"#, to: folder + "/both.json")
        #expect(throws: InstrumentError.self) { try loadInstrument(path: folder + "/both.json") }
        write(#"{"program": 3, "keys": []}"#, to: folder + "/alone.json")
        #expect {
            try loadInstrument(path: folder + "/alone.json")
        } throws: { error in
            (error as? InstrumentError)?.description.contains("program chooses a SoundFont's preset") == true
        }
    }

    /// SF3: a sample stored as Ogg Vorbis plays at its pitch after decoding.
    @Test func compressedSamplesAreDecoded() throws {
        let folder = temporaryFolder()
        let oggPath = folder + "/sine.ogg"
        var info = SF_INFO()
        info.samplerate = 48_000
        info.channels = 1
        info.format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        let file = try #require(sf_open(oggPath, Int32(SFM_WRITE), &info))
        let seconds = (0..<48_000).map { Float(0.3 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
        _ = seconds.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, 48_000) }
        sf_close(file)
        let ogg = Array(try Data(contentsOf: URL(fileURLWithPath: oggPath)))
        var builder = SoundFontBuilder(
            samples: [.init(name: "ogg", frames: [], compressed: ogg)],
            instruments: [.init(name: "ogg", zones: [.init(target: 0)])],
            presets: [.init(name: "Ogg", program: 0, zones: [.init(target: 0)])])
        builder.versionMajor = 3
        builder.versionMinor = 1
        try Data(builder.bytes()).write(to: URL(fileURLWithPath: folder + "/ogg.sf3"))
        let loaded = try loadInstrument(path: folder + "/ogg.sf3")
        #expect(loaded.bank.frameCount(of: 0) == 48_000)
        let (left, _) = strike(loaded, key: 67)
        #expect(abs(cents(measuredFrequency(left, 2_400..<20_000), 1000 * pow(2, 7.0 / 12))) < 1)
    }
}
