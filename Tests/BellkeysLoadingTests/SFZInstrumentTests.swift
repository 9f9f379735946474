import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import EngineTestSupport
import Foundation
import Testing

/// The repository's copies of VSCO 2 CE's instrument files (CC0; see LICENSE-NOTE.txt there).
let vscoFolder: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<2 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("Fixtures/sfz/vsco2ce").path
}()

/// A stand-in for a recording: 1.5 s of a sine at `key`'s pitch at `level`, and for a stereo
/// one, a sine at 1.5 times that pitch on the right.
func writeStandIn(_ path: String, key: Int, level: Float, stereo: Bool = false) throws {
    let f = 440 * pow(2, Double(key - 69) / 12)
    let left = (0..<72_000).map { Float(sin(2 * Double.pi * f * Double($0) / 48_000)) * level }
    let writer = try SoundFileWriter(path: path, sampleRate: 48_000, channelCount: stereo ? 2 : 1, format: .f32)
    if stereo {
        let right = (0..<72_000).map { Float(sin(2 * Double.pi * 1.5 * f * Double($0) / 48_000)) * level }
        try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { try writer.write(left: l, right: $0) }
        }
    } else {
        try left.withUnsafeBufferPointer { try writer.write($0) }
    }
    try writer.finish()
}

/// Renders one strike of `key` at velocity 127 through `loaded` (left and right, 0.5 s).
/// An engine for `loaded` at its rate, its limiter out of the way (levels are measured as they are).
func unlimitedEngine(_ loaded: LoadedInstrument) -> Engine {
    var config = EngineConfiguration(sampleRate: loaded.sampleRate)
    config.limiterThreshold = 100
    return Engine(bank: loaded.bank, instrument: loaded.instrument, configuration: config)
}

func strike(_ loaded: LoadedInstrument, key: Int) -> (left: [Float], right: [Float]) {
    let engine = unlimitedEngine(loaded)
    engine.enqueue(.control(frame: 0, controller: 7, value: 127))
    engine.enqueue(.noteOn(frame: 0, note: key, velocity: 127))
    return renderStereo(engine, 24_000)
}

@Suite struct SFZInstruments {
    /// VSCO 2 CE's tubular bells, as the library ships them, over stand-ins named as it names
    /// them (one recorded in another case, and stereo): every key from 60 to 79 sounds at its
    /// own pitch within 1 cent, from the recording the file gives it, at that region's volume
    /// (+6 dB, or +16 dB for the F5); keys outside are counted, not played.
    @Test func vscoTubularBellsPlayEveryKeyItCovers() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: vscoFolder + "/TubularBells.sfz", toPath: folder + "/TubularBells.sfz")
        try FileManager.default.createDirectory(atPath: folder + "/Percussion", withIntermediateDirectories: true)
        let recordings: [(name: String, key: Int, level: Float, decibels: Double)] = [
            ("TB_hit_C4_v4_rr1.wav", 60, 0.1, 6), ("TB_hit_G4_v4_rr1.wav", 67, 0.12, 6),
            ("TB_hit_C5_v4_rr1.wav", 72, 0.14, 6), ("tb_HIT_f5_v3_rr1.WAV", 77, 0.05, 16),
        ]
        for r in recordings {
            try writeStandIn(folder + "/Percussion/" + r.name, key: r.key, level: r.level, stereo: r.key == 77)
        }
        let loaded = try loadInstrument(path: folder + "/TubularBells.sfz")
        #expect(loaded.instrument.regions.count == 4)
        #expect(loaded.warnings.contains { $0.hasSuffix(":39:1: unsupported opcode group_label, ignored") })
        for key in 60...79 {
            // (the file's ranges: 60-63 C4, 64-69 G4, 70-74 C5, 75-79 F5)
            let expected =
                key <= 63 ? recordings[0] : key <= 69 ? recordings[1] : key <= 74 ? recordings[2] : recordings[3]
            let (left, right) = strike(loaded, key: key)
            let pitch = 440 * pow(2, Double(key - 69) / 12)
            let error = cents(measuredFrequency(left, 2_400..<24_000), pitch)
            #expect(abs(error) < 1, "key \(key): \(error) cents")
            // Level: the sine's RMS (level/√2) at the region's volume (the envelope holds full
            // level until note-off).
            let rms = power(Array(left[2_400...])).squareRoot()
            let wanted = Double(expected.level) / 2.0.squareRoot() * pow(10, expected.decibels / 20)
            #expect(abs(20 * log10(rms / wanted)) < 0.05, "key \(key): \(20 * log10(rms / wanted)) dB")
            if expected.key == 77 {
                #expect(abs(cents(measuredFrequency(right, 2_400..<24_000), pitch * 1.5)) < 1)
            } else {
                #expect(left == right)
            }
        }
        for key in [59, 80] {
            let engine = unlimitedEngine(loaded)
            engine.enqueue(.noteOn(frame: 0, note: key, velocity: 127))
            #expect(render(engine, 1_000).allSatisfy { $0 == 0 })
            #expect(engine.ignoredNotes.load(ordering: .relaxed) == 1)
        }
    }

    /// VSCO 2 CE's glockenspiel (`default_path=Percussion\Glock\`): keys 67 to 96, each within
    /// 1 cent, transposed from -4 to +3 semitones.
    @Test func vscoGlockenspielPlaysEveryKeyItCovers() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(atPath: vscoFolder + "/Glockenspiel.sfz", toPath: folder + "/Glockenspiel.sfz")
        try FileManager.default.createDirectory(atPath: folder + "/Percussion/Glock", withIntermediateDirectories: true)
        let centres = ["G4": 67, "C5": 72, "G5": 79, "C6": 84, "G6": 91, "C7": 96]
        for (name, key) in centres {
            try writeStandIn(folder + "/Percussion/Glock/glock_medium_\(name).wav", key: key, level: 0.1)
        }
        let loaded = try loadInstrument(path: folder + "/Glockenspiel.sfz")
        #expect(loaded.playableRange == 67...96)
        for key in 67...96 {
            let (left, _) = strike(loaded, key: key)
            let pitch = 440 * pow(2, Double(key - 69) / 12)
            let error = cents(measuredFrequency(left, 2_400..<24_000), pitch)
            #expect(abs(error) < 1, "key \(key): \(error) cents")
            let rms = power(Array(left[2_400...])).squareRoot()
            let wanted = 0.1 / 2.0.squareRoot() * pow(10, 8.0 / 20)
            #expect(abs(20 * log10(rms / wanted)) < 0.05, "key \(key): \(20 * log10(rms / wanted)) dB")
        }
    }

    /// A map may name an SFZ instrument and replace what it gives for every region: the release,
    /// the velocity curve, pitch bend, the quality; its keys play beside the regions.
    @Test func aMapNamesAnInstrumentAndOverridesItsFields() throws {
        let folder = temporaryFolder()
        try writeStandIn(folder + "/a.wav", key: 60, level: 0.1)
        try writeStandIn(folder + "/b.wav", key: 84, level: 0.1)
        write(
            "<global> ampeg_release=15 amp_veltrack=50\n<region> lokey=48 hikey=72 pitch_keycenter=60 sample=a.wav\n",
            to: folder + "/inst.sfz")
        write(
            #"{"instrument": "inst.sfz", "releaseSeconds": 4, "velocityCurve": "linear", "quality": "best", "pitchBend": false, "keys": [{"note": "C6", "sample": "b.wav"}]}"#,
            to: folder + "/map.json")
        let loaded = try loadInstrument(path: folder + "/map.json")
        #expect(loaded.map.quality == .best)
        // The map's key first (a bell), then the SFZ file's region.
        #expect(loaded.instrument.regions.count == 2 && loaded.instrument.bellCount == 1)
        let region = loaded.instrument.regions[1]
        #expect(region.envelope?.release == 4)
        #expect(region.velocityGains?[64] == VelocityCurve.linear.gain(velocity: 64))
        #expect(!loaded.instrument.followsPitchBend)
        #expect(loaded.bank.count == 2 && loaded.instrument.bells[0].sampleIndex == 1)
        // Without the fields, the file's own values (and pitch bend, on for an instrument).
        write(#"{"instrument": "inst.sfz"}"#, to: folder + "/plain.json")
        let plain = try loadInstrument(path: folder + "/plain.json")
        #expect(plain.instrument.regions[0].envelope?.release == 15)
        let linearGain64Double: Double = 1.0 - 0.5 * (1.0 - 64.0 * 64.0 / (127.0 * 127.0))
        let linearGain64 = Float(linearGain64Double)
        #expect(abs(plain.instrument.regions[0].velocityGains![64] - linearGain64) < 1e-6)
        #expect(plain.instrument.followsPitchBend)
        // A missing instrument is named at the map's field.
        write("{\n  \"instrument\": \"gone.sfz\"\n}", to: folder + "/gone.json")
        #expect {
            try loadInstrument(path: folder + "/gone.json")
        } throws: { error in
            (error as? InstrumentError)?.description.contains(folder + "/gone.json:2:17: instrument: \"gone.sfz\"")
                == true
        }
    }

    /// Without loop points in the SFZ, a WAV file's own loop (its `smpl` chunk, first and last
    /// frame both played) is used, and a file with a loop loops; its root key (the chunk's MIDI
    /// unity note) is the centre of `pitch_keycenter=sample`.
    @Test func aWAVFilesOwnLoopAndRootKeyAreUsed() throws {
        let folder = temporaryFolder()
        let frames = (0..<1_000).map { Int16(truncatingIfNeeded: ($0 * 37) % 2_000 - 1_000) }
        var data: [UInt8] = []
        func u32(_ v: Int) { data += withUnsafeBytes(of: UInt32(v).littleEndian, Array.init) }
        func u16(_ v: Int) { data += withUnsafeBytes(of: UInt16(v).littleEndian, Array.init) }
        data += Array("RIFF".utf8)
        u32(4 + 24 + 8 + 2_000 + 8 + 60)
        data += Array("WAVEfmt ".utf8)
        u32(16)
        u16(1)
        u16(1)
        u32(48_000)
        u32(96_000)
        u16(2)
        u16(16)
        data += Array("data".utf8)
        u32(2_000)
        for f in frames { u16(Int(UInt16(bitPattern: f))) }
        // smpl: manufacturer, product, period, unity note 67, pitch fraction, SMPTE format and
        // offset, one loop, no extra data; the loop: id, type 0 (forward), start 200, end 699
        // (the last frame played, as the WAV format has it), fraction, play count.
        data += Array("smpl".utf8)
        u32(60)
        for v in [0, 0, 20_833, 67, 0, 0, 0, 1, 0, 0, 0, 200, 699, 0, 0] { u32(v) }
        try Data(data).write(to: URL(fileURLWithPath: folder + "/looped.wav"))
        write("<region> lokey=60 hikey=72 pitch_keycenter=sample sample=looped.wav\n", to: folder + "/x.sfz")
        let loaded = try loadInstrument(path: folder + "/x.sfz")
        let region = loaded.instrument.regions[0]
        #expect(region.pitchKeycenter == 67)
        #expect(region.loopMode == .continuous)
        #expect(region.loopStart == 200 && region.loopEnd == 699)
        // Played at its own key: frames 0 to 699, then 200 to 699 again and again.
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        let engine = Engine(bank: loaded.bank, instrument: loaded.instrument, configuration: config)
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        engine.enqueue(.noteOn(frame: 0, note: 67, velocity: 127))
        let out = render(engine, 2_000)
        for i in [0, 699, 700, 1_199, 1_200, 1_999] {
            let frame = i < 700 ? i : 200 + (i - 700) % 500
            #expect(out[i] == Float(frames[frame]) / 32_768, "frame \(i)")
        }
    }

    /// A sample that a region loops keeps its end as recorded (a sample that ends abruptly is
    /// otherwise faded over 2 ms, which a loop would play at every turn: a click 40 dB up on the
    /// transposition figure when that was so); one played once is still faded.
    @Test func aLoopedSampleIsNotFadedAtItsEnd() throws {
        let folder = temporaryFolder()
        // A 1 kHz sine of 48 whole cycles: its last frame is loud (-0.065).
        let sine = (0..<2_304).map { Float(sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) * 0.5 }
        try writeWAV(sine, to: folder + "/loop.wav", format: .s16)
        try writeWAV(sine, to: folder + "/once.wav", format: .s16)
        write(
            "<region> key=60 sample=loop.wav loop_mode=loop_continuous\n<region> key=62 sample=once.wav\n",
            to: folder + "/x.sfz")
        let loaded = try loadInstrument(path: folder + "/x.sfz")
        #expect(loaded.fadedEnds == [false, true])
        let last = loaded.bank.value(sample: 0, frame: 2_303)
        #expect(abs(last - sine[2_303]) < 1.0 / 32_768 && abs(last) > 0.06)
        #expect(loaded.bank.value(sample: 1, frame: 2_303) == 0)
        #expect(loaded.instrument.regions[0].loopEnd == 2_303)
    }

    /// `trigger=first`/`legato`, `off_mode=time` with `off_time` (an `off_time` alone implies
    /// it, as sfizz has it; an `off_mode` after it wins), and `bend_up`/`bend_down` reach the
    /// regions (what each does is tested in the engine's RegionSelection and PitchBend suites);
    /// a region that gives no bend range keeps the channel's.
    @Test func heldKeysChokeTimeAndBendRangeReachTheRegions() throws {
        let folder = temporaryFolder()
        try writeStandIn(folder + "/a.wav", key: 60, level: 0.5)
        write(
            """
            <region> key=60 sample=a.wav trigger=first off_mode=time off_time=0.25 bend_up=1200
            <region> key=61 sample=a.wav trigger=legato bend_down=-50
            <region> key=62 sample=a.wav off_time=0.125
            <region> key=63 sample=a.wav off_time=0.125 off_mode=fast

            """, to: folder + "/x.sfz")
        let regions = try loadInstrument(path: folder + "/x.sfz").instrument.regions
        #expect(regions.map(\.heldKeys) == [.first, .legato, .any, .any])
        #expect(regions.map(\.offFadeSeconds) == [0.25, nil, 0.125, nil])
        #expect(regions[0].bendRangeCents == BendRange(up: 1_200, down: -200))
        #expect(regions[1].bendRangeCents == BendRange(up: 200, down: -50))
        #expect(regions[2].bendRangeCents == nil)
    }

    /// A sample that is missing is named with the SFZ file's line and column of its `sample=`,
    /// before anything plays.
    @Test func aMissingSampleIsNamedWithItsLine() throws {
        let folder = temporaryFolder()
        write("<region>\nlokey=60 hikey=62\nsample=nowhere/bell.wav\n", to: folder + "/x.sfz")
        #expect {
            try loadInstrument(path: folder + "/x.sfz")
        } throws: { error in
            let text = (error as? InstrumentError)?.description ?? ""
            return text.contains(folder + "/x.sfz:3:8") && text.contains("nowhere/bell.wav")
                && text.contains("no such file")
        }
    }
}
