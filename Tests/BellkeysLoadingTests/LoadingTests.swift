import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysSystem
import Foundation
import Testing

@Suite struct Loading {
    func problems(map: String, in folder: String) -> [InstrumentProblem] {
        let path = folder + "/map.json"
        write(map, to: path)
        do {
            _ = try loadInstrument(path: path)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func missingSampleNamesTheFileTheFieldAndTheFix() throws {
        let folder = temporaryFolder()
        try writeWAV([0.5, 0.25], to: folder + "/ok.wav")
        let found = problems(
            map: """
                {"keys": [{"note": "C4", "sample": "ok.wav"},
                          {"note": "D4", "sample": "missing.wav"}]}
                """, in: folder)
        #expect(found.count == 1)
        let p = try #require(found.first)
        #expect(p.path == "keys[1].sample")
        #expect((p.line, p.column) == (2, 36))
        #expect(p.message.contains("missing.wav"))
        #expect(p.message.contains("no such file"))
        #expect(p.fix.contains("relative to the map file"))
        #expect(p.description.hasPrefix(folder + "/map.json:2:36: keys[1].sample: "))
    }

    @Test func unsupportedAndEmptySamples() throws {
        let folder = temporaryFolder()
        write("this is not audio", to: folder + "/text.wav")
        try FileManager.default.createDirectory(atPath: folder + "/folder.wav", withIntermediateDirectories: true)
        let writer = try SoundFileWriter(path: folder + "/empty.wav", sampleRate: 48_000, channelCount: 1, format: .s16)
        try writer.finish()
        let found = problems(
            map: """
                {"keys": [{"note": 60, "sample": "text.wav"}, {"note": 61, "sample": "empty.wav"},
                          {"note": 62, "sample": "folder.wav"}]}
                """, in: folder)
        #expect(found.map(\.path) == ["keys[0].sample", "keys[1].sample", "keys[2].sample"])
        #expect(found[0].message.contains("libsndfile cannot read it"))
        #expect(found[0].fix.contains("WAV"))
        #expect(found[1].message.contains("zero length"))
        #expect(found[2].message.contains("it is a folder"))
    }

    @Test func mapFileThatCannotBeRead() {
        do {
            _ = try loadInstrument(path: "/nonexistent/tags.json")
            Issue.record("loaded")
        } catch {
            #expect(
                error.description.hasPrefix(
                    "/nonexistent/tags.json: cannot read the map file: No such file or directory"))
        }
    }

    @Test func otherRatesAreResampledOnceAtLoadAndStereoIsMixedToMono() throws {
        let folder = temporaryFolder()
        let sine = (0..<44_100).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 44_100)) }
        try writeWAV(sine, to: folder + "/sine44.wav", sampleRate: 44_100)
        let writer = try SoundFileWriter(
            path: folder + "/stereo.wav", sampleRate: 48_000, channelCount: 2, format: .f32)
        try [Float](repeating: 0.25, count: 100).withUnsafeBufferPointer { try writer.write($0) }
        try writer.finish()
        write(
            """
            {"keys": [{"note": 60, "sample": "sine44.wav"}, {"note": 62, "sample": "stereo.wav"}]}
            """, to: folder + "/map.json")
        let loaded = try loadInstrument(path: folder + "/map.json", sampleRate: 48_000)
        #expect(loaded.resampled)
        #expect(loaded.fileSampleRates == [44_100, 48_000])
        #expect(abs(loaded.bank.frameCounts[0] - 48_000) <= 1)
        // Still a 441 Hz sine of amplitude 0.5 (libsamplerate's medium sinc converter).
        var frames: [Float] = []
        for i in 0..<48_000 { frames.append(loaded.bank.value(sample: 0, frame: i)) }
        let m = magnitude(frames[4_800..<43_200], hertz: 441, sampleRate: 48_000) * 2
        #expect(abs(m - 0.5) < 0.01)
        #expect(abs(loaded.bank.value(sample: 1, frame: 10) - 0.25) < 1e-6)
    }

    @Test func abruptEndsGetAShortFadeAndOthersAreUntouched() throws {
        let folder = temporaryFolder()
        try writeWAV([Float](repeating: 0.5, count: 1_000), to: folder + "/abrupt.wav")
        try writeWAV([Float](repeating: 0.5, count: 999) + [0], to: folder + "/clean.wav")
        write(
            #"{"keys": [{"note": 60, "sample": "abrupt.wav"}, {"note": 61, "sample": "clean.wav"}]}"#,
            to: folder + "/map.json")
        let loaded = try loadInstrument(path: folder + "/map.json")
        #expect(loaded.fadedEnds == [true, false])
        #expect(loaded.bank.value(sample: 0, frame: 999) == 0)
        #expect(loaded.bank.value(sample: 0, frame: 749) == 0.5) // fade: last 96 frames only
        #expect(loaded.bank.value(sample: 0, frame: 903) == 0.5)
        #expect(loaded.bank.value(sample: 0, frame: 904) < 0.5)
        #expect(loaded.bank.value(sample: 1, frame: 998) == 0.5)
    }
}

@Suite struct RenderingFiles {
    /// An impulse sample per key, a MIDI file with a tempo change and running status: every
    /// note must start at frame round(t × rate) exactly, with its velocity-curve gain.
    @Test func notesStartAtTheirExactFramesThroughTheWholePipeline() throws {
        let folder = temporaryFolder()
        var impulse = [Float](repeating: 0, count: 100)
        impulse[0] = 0.5
        try writeWAV(impulse, to: folder + "/click.wav", format: .s16)
        write(
            """
            {"keys": [{"note": "C4", "sample": "click.wav"}, {"note": "E4", "sample": "click.wav", "gainDecibels": -6.020599913}]}
            """, to: folder + "/map.json")
        // 100 ticks per quarter; 0.5 s per quarter, then 0.3 s per quarter from tick 150.
        let tempo: [UInt8] = [
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x81, 0x16, 0xFF, 0x51, 0x03, 0x04, 0x93, 0xE0, 0x00, 0xFF, 0x2F,
            0x00,
        ]
        let notes: [UInt8] = [0x21, 0x90, 60, 127, 0x75, 64, 127, 0x37, 60, 64, 0x00, 0xFF, 0x2F, 0x00]
        var midi: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, 2, 0, 100]
        midi += Array("MTrk".utf8) + [0, 0, 0, UInt8(tempo.count)] + tempo
        midi += Array("MTrk".utf8) + [0, 0, 0, UInt8(notes.count)] + notes
        let file = try parseMIDIFile(midi, file: "t.mid")
        let loaded = try loadInstrument(path: folder + "/map.json")
        var instrument = loaded.instrument
        instrument.masterVolumeDecibels = 0
        let engine = Engine(
            bank: loaded.bank, instrument: instrument, configuration: EngineConfiguration(sampleRate: 44_100))
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        let schedule = file.scheduled(sampleRate: 44_100)
        var out: [Float] = []
        _ = renderOffline(
            engine: engine, events: schedule.events, endFrame: schedule.endFrame,
            chunkFrames: 1_000
        ) { (chunk: UnsafeBufferPointer<Float>) in out += chunk }
        // Ticks 33, 150 (=33+117), 205 (=150+55). Times: 0.165 s, 0.75 s, 0.75 + 55/100 × 0.3 = 0.915 s;
        // 0.915 × 44100 = 40351.5 exactly, rounded half up.
        let onsets = out.indices.filter { out[$0] != 0 }
        #expect(onsets == [7_277, 33_075, 40_352]) // round(t × 44100)
        #expect(out[7_277] == 0.5) // C4, velocity 127
        #expect(abs(out[33_075] - 0.25) < 1e-6) // E4, -6 dB
        #expect(out[40_352] == Float(0.5 * (64.0 / 127) * (64.0 / 127))) // C4, velocity 64, square curve
        // Renders past the end of the file until the last voice has ended (within one block).
        #expect(out.count >= 40_352 + 100 && out.count <= 40_352 + 100 + 64)
    }

    @Test(arguments: [(OutputSampleFormat.s16, 32_767), (.s24, 8_388_607)])
    func integerFormatsRoundToNearestAndClip(format: OutputSampleFormat, full: Int) throws {
        let path = temporaryFolder() + "/r.wav"
        try writeWAV([0.25, -0.25, 1.5, -1.5, 0, 0.5], to: path, format: format)
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let size = format.byteCount
        let data = bytes.indices.first { bytes[$0..<($0 + 4)].elementsEqual(Array("data".utf8)) }! + 8
        let values = (0..<6).map { i -> Int in
            var v = 0
            for b in (0..<size).reversed() { v = v << 8 | Int(bytes[data + i * size + b]) }
            return v >= 1 << (size * 8 - 1) ? v - (1 << (size * 8)) : v
        }
        // 0.25 × full is x.75: nearest, not rounded down as libsndfile's own conversion does.
        let quarter = (full + 1) / 4
        #expect(values == [quarter, -quarter, full, -full - 1, 0, (full + 1) / 2])
    }

    @Test func aFailedWriteKeepsTheExistingFile() throws {
        let folder = temporaryFolder()
        let path = folder + "/out.wav"
        write("precious", to: path)
        do {
            let writer = try SoundFileWriter(path: path, sampleRate: 48_000, channelCount: 2, format: .s16)
            try [Float](repeating: 0.1, count: 10).withUnsafeBufferPointer { try writer.write($0) }
            // Dropped without finish(): as if the render failed half way.
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    }
}
