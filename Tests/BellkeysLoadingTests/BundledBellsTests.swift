import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysModel
import Foundation
import Synchronization
import Testing

@Suite struct BundledBells {
    @Test func defaultMapMapsTheTutorialTagsToThirteenBells() throws {
        let loaded = try loadInstrument(path: samplesFolder + "/tags.json")
        #expect(loaded.map.keys.map(\.note) == Array(60...72))
        #expect(loaded.map.keys.map { $0.tag! } == Array(100...112))
        #expect(loaded.sampleRate == 48_000)
        #expect(loaded.bank.count == 13)
        #expect(!loaded.resampled)
        #expect(loaded.fadedEnds.allSatisfy { !$0 })
    }

    @Test(arguments: Array(60...72))
    func eachBellIsWellFormed(note: Int) throws {
        let name = ["C", "Cs", "D", "Ds", "E", "F", "Fs", "G", "Gs", "A", "As", "B"][note % 12] + "\(note / 12 - 1)"
        let (frames, rate, channels) = try readWAV(samplesFolder + "/bell-\(name).wav")
        #expect(rate == 48_000 && channels == 1)
        // Each bell rings until its partials have fallen 60 dB (Tools/make-bells), in 0.1 s
        // steps: a smaller bell rings shorter.
        let seconds = [12.6, 12.2, 11.8, 11.4, 11.0, 10.6, 10.3, 9.9, 9.6, 9.2, 8.9, 8.6, 8.3][note - 60]
        #expect(frames.count == Int((seconds * 48_000).rounded()))
        // Nothing audible is cut: the 0.1 s before the last second's fade is more than 50 dB
        // under the first 0.1 s (51.9 to 59.9 dB, bell by bell).
        func rms(_ part: ArraySlice<Float>) -> Double {
            (part.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(part.count)).squareRoot()
        }
        let beforeFade = rms(frames[(frames.count - 52_800)..<(frames.count - 48_000)]) / rms(frames[0..<4_800])
        #expect(20 * log10(beforeFade) < -50, "\(20 * log10(beforeFade)) dB")
        #expect(20 * log10(beforeFade) > -61) // and the bell is not padded with silence
        let peak = frames.map(abs).max()!
        #expect(peak <= 0.5 + 1e-4) // -6 dBFS: headroom for chords, never clipping
        #expect(peak > 0.3)
        #expect(abs(frames[0]) > 0.01) // the strike starts on the first frame
        #expect(frames.suffix(48).allSatisfy { abs($0) < 1e-3 }) // and the bell ends in silence

        // Pitch: the strongest partial is the nominal, one octave above the key, so the strike
        // note (heard an octave below the nominal) is the key. Scan ±1 semitone in 1-cent steps.
        let key = 440 * pow(2, Double(note - 69) / 12)
        let window = frames[4_800..<52_800]
        let nominal = magnitude(window, hertz: 2 * key, sampleRate: rate)
        for ratio in [1.2, 1.5, 2.5, 3.0, 4.0] {
            #expect(magnitude(window, hertz: ratio * key, sampleRate: rate) < nominal)
        }
        var bestCents = 0, best = 0.0
        for cents in -100...100 {
            let m = magnitude(window, hertz: 2 * key * pow(2, Double(cents) / 1200), sampleRate: rate)
            if m > best { (best, bestCents) = (m, cents) }
        }
        #expect(abs(bestCents) <= 2, "nominal is \(bestCents) cents off")
        // The hum and prime are in tune with the key too (true-harmonic tuning).
        #expect(
            magnitude(window, hertz: key, sampleRate: rate) > 10
                * magnitude(window, hertz: key * 1.06, sampleRate: rate))
    }

    /// Equal velocity must sound equally loud on every key. The generator matches A-weighted
    /// energy; measure it back from the files: each partial's level in the first second
    /// (Goertzel), weighted by the A curve, summed.
    @Test func levelsAreMatchedAcrossTheOctave() throws {
        let names = ["C4", "Cs4", "D4", "Ds4", "E4", "F4", "Fs4", "G4", "Gs4", "A4", "As4", "B4", "C5"]
        let ratios = [0.5, 1, 1.2, 1.5, 2, 2.5, 2.667, 3, 4]
        let levels = try names.enumerated().map { i, name -> Double in
            let frames = try readWAV(samplesFolder + "/bell-\(name).wav").frames
            let key = 440 * pow(2, Double(i - 9) / 12)
            let energy = ratios.reduce(0.0) { sum, ratio in
                let a = aWeighting(ratio * key) * magnitude(frames[0..<48_000], hertz: ratio * key, sampleRate: 48_000)
                return sum + a * a
            }
            return 10 * log10(energy)
        }
        #expect(levels.max()! - levels.min()! < 1, "A-weighted levels in dB: \(levels)")
    }

    func aWeighting(_ f: Double) -> Double {
        let f2 = f * f
        return 12_194 * 12_194 * f2 * f2
            / ((f2 + 20.6 * 20.6) * sqrt((f2 + 107.7 * 107.7) * (f2 + 737.9 * 737.9)) * (f2 + 12_194 * 12_194))
    }

    @Test func loadsFastAndSmall() throws {
        let loaded = try loadInstrument(path: samplesFolder + "/tags.json")
        #expect(loaded.bank.byteCount == 1_344 * 48_000 * 2 / 10) // 134.4 s of 16-bit frames in all
        #expect(loaded.loadSeconds < 0.5) // generous for debug builds; docs/design/performance.md has the release figure
    }
}

@Suite struct Headroom {
    /// All 13 bundled bells at full velocity at once, at the default volume and at the loudest
    /// settings (CC7 127, master +12 dB): the limiter holds the peak, nothing wraps or clips.
    @Test(arguments: [(100, 0.0), (127, 12.0)])
    func thirteenFullVelocityBellsNeverClip(channelVolume: Int, masterDecibels: Double) throws {
        let loaded = try loadInstrument(path: samplesFolder + "/tags.json")
        var instrument = loaded.instrument
        instrument.masterVolumeDecibels = masterDecibels
        let engine = Engine(
            bank: loaded.bank, instrument: instrument, configuration: EngineConfiguration(sampleRate: 48_000))
        var events = [EngineEvent.control(frame: 0, controller: 7, value: channelVolume)]
        events += (60...72).map { EngineEvent.noteOn(frame: 0, note: $0, velocity: 127) }
        var peak: Float = 0
        let frames = renderOffline(engine: engine, events: events, endFrame: 0) { (chunk: UnsafeBufferPointer<Float>) in
            for x in chunk { peak = max(peak, abs(x)) }
        }
        #expect(frames >= 604_800) // C4 rings 12.6 s, and the hall after it
        #expect(peak <= 0.891)
        #expect(peak > 0.8)
        #expect(engine.clippedSamples.load(ordering: .relaxed) == 0)
        #expect(engine.limitedFrames.load(ordering: .relaxed) > 0)
    }

    /// One bell at full velocity and default volume stays far below the limiter (-10 dBFS).
    @Test func oneBellPassesUntouched() throws {
        // The bells alone: centred, dry, one timbre (the bundled map places them on a table).
        let loaded = try loadInstrument(path: samplesFolder + "/examples/plain.json")
        let engine = Engine(
            bank: loaded.bank, instrument: loaded.instrument, configuration: EngineConfiguration(sampleRate: 48_000))
        var peak: Float = 0
        _ = renderOffline(engine: engine, events: [.noteOn(frame: 0, note: 60, velocity: 127)], endFrame: 0) {
            (chunk: UnsafeBufferPointer<Float>) in for x in chunk { peak = max(peak, abs(x)) }
        }
        #expect(abs(peak - 0.5 * Float((100.0 / 127) * (100.0 / 127))) < 1e-3)
        #expect(engine.limitedFrames.load(ordering: .relaxed) == 0)
    }
}
