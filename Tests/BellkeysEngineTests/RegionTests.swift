import BellkeysEngine
import BellkeysModel
import Glibc
import Testing

// Regions: samples played at any key by their ratio, layered, stereo, looped and enveloped.

/// An engine at 48 kHz over `bank` with `regions` (and no mapped keys), CC7 at 127 on
/// channel 0 so the bus gain is exactly 1, the limiter out of the way.
func regionEngine(
    _ bank: SampleBank, _ regions: [Region], quality: InterpolationQuality = .standard, polyphony: Int = 16
) -> Engine {
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: polyphony)
    config.limiterThreshold = 100
    config.interpolation = quality
    var instrument = Instrument(keys: [])
    instrument.regions = regions
    let engine = Engine(bank: bank, instrument: instrument, configuration: config)
    engine.enqueue(.control(frame: 0, controller: 7, value: 127))
    return engine
}

@Suite struct Regions {
    /// One looped 1 kHz sine (root key 60) over the whole keyboard: every key sounds at its
    /// equal-tempered pitch within 0.01 cent, down three octaves and up two, at every quality.
    @Test(arguments: InterpolationQuality.allCases)
    func everyKeySoundsAtItsPitch(quality: InterpolationQuality) {
        let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopStart = 0
        region.loopEnd = 47_999
        for key in [24, 36, 48, 55, 59, 60, 61, 67, 72, 79, 84] {
            let e = regionEngine(bank, [region], quality: quality)
            e.enqueue(.noteOn(frame: 0, note: key, velocity: 127))
            let out = render(e, 24_000)
            let expected = 1_000 * exp2(Double(key - 60) / 12)
            let error = cents(measuredFrequency(out, 2_400..<24_000), expected)
            #expect(abs(error) < 0.01, "key \(key): \(error) cents")
        }
    }

    /// Tuning and keytrack: +50 cents of `tune` and 50 cents a key.
    @Test func tuneAndKeytrackMoveThePitch() {
        let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.tuneCents = 50
        region.pitchKeytrackCents = 50
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: 64, velocity: 127)) // 4 keys × 50 + 50 = 250 cents
        let out = render(e, 24_000)
        let error = cents(measuredFrequency(out, 2_400..<24_000), 1_000 * exp2(2.5 / 12))
        #expect(abs(error) < 0.01)
    }

    /// At its own pitch a region's sample comes out value for value (no kernel), however long
    /// the voice and wherever blocks split it.
    @Test func atItsOwnPitchTheSampleComesOutExactly() {
        let ramp: [Float] = (0..<1_000).map { Float($0 % 97) / 128 - 0.3 }
        let bank = SampleBank(samples: [ramp], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.offset = 10 // (an offset makes the voice take the pitched path)
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 5, note: 60, velocity: 127))
        var out: [Float] = []
        for size in [3, 64, 17, 1_000] { out += render(e, size) }
        #expect(out[0..<5].allSatisfy { $0 == 0 })
        for i in 0..<990 { #expect(out[5 + i] == bank.value(sample: 0, frame: 10 + i)) }
        #expect(out[995...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    /// Velocity layers: a strike starts every region whose key and velocity ranges hold it, and
    /// only those; regions that overlap sound together.
    @Test func aStrikeStartsEveryMatchingRegion() {
        let bank = SampleBank(
            samples: [constant(0.25, 100), constant(0.125, 100), constant(1.0 / 64, 100)], sampleRate: 48_000)
        var soft = Region(sampleIndex: 0)
        soft.keyRange = 60...64
        soft.velocityRange = 1...63
        var loud = Region(sampleIndex: 1)
        loud.keyRange = 60...64
        loud.velocityRange = 64...127
        var top = Region(sampleIndex: 2)
        top.keyRange = 60...60
        top.velocityRange = 100...127
        var strikes: [(velocity: Int, expected: Float)] = [(63, 0.25), (64, 0.125), (100, 0.125 + 1.0 / 64)]
        strikes = strikes.map { ($0.velocity, $0.expected * Float($0.velocity * $0.velocity) / (127 * 127)) }
        for (velocity, expected) in strikes {
            let e = regionEngine(bank, [soft, loud, top])
            e.enqueue(.noteOn(frame: 0, note: 60, velocity: velocity))
            let out = render(e, 50)
            #expect(abs(out[10] - expected) < 1e-7, "velocity \(velocity): \(out[10]) != \(expected)")
        }
        let e = regionEngine(bank, [soft, loud, top])
        e.enqueue(.noteOn(frame: 0, note: 65, velocity: 100)) // outside every key range
        _ = render(e, 50)
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 1)
    }

    /// The envelope to the frame: delay 48, attack 96 (linear), hold 48, decay to half (linear
    /// in dB at 90 dB per 0.1 s: 321 frames), sustain, and a release from note-off reaching
    /// −90 dB after 0.2 s × 13.95/14.95 (8958 frames), where the voice ends. Decay and release
    /// are exact on the curve every 64 frames of the stage and straight lines between (at most
    /// 0.25 % off the curve here, where a piece falls 1.2 dB).
    @Test func theEnvelopeMovesOnItsFrames() {
        let bank = SampleBank(samples: [constant(0.5, 20_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.envelope = Envelope(delay: 0.001, attack: 0.002, hold: 0.001, decay: 0.1, sustain: 0.5, release: 0.2)
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 2_000, note: 60))
        var out: [Float] = []
        for _ in 0..<200 { out += render(e, 64) }
        #expect(out[0..<48].allSatisfy { $0 == 0 })
        for k in 0..<96 { #expect(abs(out[48 + k] - 0.5 * Float(k) / 96) < 1e-6, "attack frame \(k)") }
        #expect(out[144..<192].allSatisfy { $0 == 0.5 })
        let perFrame = -90.0 / 20 / 4_800 // log10 of the gain per frame while decaying
        for k in [64, 128, 192, 256] {
            let expected = 0.5 * pow(10, perFrame * Double(k))
            #expect(abs(Double(out[192 + k]) - expected) < 1e-6, "decay frame \(k)")
        }
        for k in [1, 32, 100, 300] {
            let expected = 0.5 * pow(10, perFrame * Double(k))
            #expect(abs(Double(out[192 + k]) / expected - 1) < 0.0025, "decay frame \(k)")
        }
        #expect(out[192 + 321..<2_000].allSatisfy { $0 == 0.25 })
        let releaseFrames = 8_958
        for k in [0, 1_024, 4_800, 8_000] {
            let expected = 0.25 * pow(10, perFrame / 2 * Double(k))
            #expect(abs(Double(out[2_000 + k]) - expected) < 1e-6, "release frame \(k)")
        }
        #expect(abs(Double(out[2_000 + releaseFrames - 1]) / (0.5 * pow(10, -4.5)) - 1) < 0.01)
        #expect(out[(2_000 + releaseFrames)...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    /// A release from full level takes exactly `release` seconds to −90 dB.
    @Test func aReleaseFromFullLevelTakesItsTime() {
        let bank = SampleBank(samples: [constant(0.5, 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.envelope = Envelope(release: 0.25)
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 100, note: 60))
        var out: [Float] = []
        for _ in 0..<400 { out += render(e, 50) }
        #expect(out[99] == 0.5)
        #expect(abs(Double(out[100 + 6_016]) - 0.5 * pow(10, -4.5 * 6_016 / 12_000)) < 1e-6)
        #expect(out[100 + 11_999] > 0)
        #expect(out[(100 + 12_000)...].allSatisfy { $0 == 0 })
    }

    /// A looped, transposed sine has no step at the loop point: the largest change between
    /// frames near the seam is no larger than anywhere else.
    @Test func aLoopHasNoStepAtItsSeam() {
        // 1 kHz over a 480-frame loop (10 cycles) after a 1000-frame attack of the same sine.
        let sine = loopedSine(cycles: 31, frames: 1_488)
        let bank = SampleBank(samples: [sine], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopStart = 1_008
        region.loopEnd = 1_487
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: 63, velocity: 127))
        let out = render(e, 20_000)
        var largest: Double = 0
        for i in 2..<out.count { largest = max(largest, abs(Double(out[i] - 2 * out[i - 1] + out[i - 2]))) }
        // A sine of amplitude a at frequency f has second differences of at most a (2π f / fs)².
        let f = 1_000 * exp2(3.0 / 12), bound = 0.5 * (2 * Double.pi * f / 48_000) * (2 * Double.pi * f / 48_000)
        #expect(largest < bound * 1.01, "\(largest) against \(bound)")
        #expect(abs(cents(measuredFrequency(out, 2_000..<20_000), f)) < 0.01)
    }

    /// A stereo sample stays stereo: both sides through the same ratio, still distinct after
    /// transposing, and a pan is a balance (the far side turned down).
    @Test func aStereoSampleStaysStereo() {
        let bank = SampleBank(sampleRate: 48_000)
        bank.append(left: loopedSine(cycles: 1_000, frames: 48_000), right: loopedSine(cycles: 1_500, frames: 48_000))
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.pan = 0.5
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: 127))
        let (left, right) = renderStereo(e, 24_000)
        let up = exp2(7.0 / 12)
        #expect(abs(cents(measuredFrequency(left, 2_400..<24_000), 1_000 * up)) < 0.01)
        #expect(abs(cents(measuredFrequency(right, 2_400..<24_000), 1_500 * up)) < 0.01)
        let levels = (power(Array(left[2_400...])), power(Array(right[2_400...])))
        #expect(abs(levels.0 / levels.1 - 0.25) < 0.001) // left at half: a quarter of the power
    }

    /// Played far above its pitch (a 4 kHz sine three octaves up: 32 kHz, above the output's
    /// Nyquist frequency), a sample is filtered away, not folded back into the band.
    @Test(arguments: InterpolationQuality.allCases)
    func aboveNyquistIsFilteredNotFolded(quality: InterpolationQuality) {
        let bank = SampleBank(samples: [loopedSine(cycles: 4_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        let reference = regionEngine(bank, [region], quality: quality)
        reference.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let atPitch = power(Array(render(reference, 24_000)[4_800...]))
        let e = regionEngine(bank, [region], quality: quality)
        e.enqueue(.noteOn(frame: 0, note: 96, velocity: 127))
        let folded = power(Array(render(e, 24_000)[4_800...]))
        #expect(10 * log10(folded / atPitch) < -60, "\(10 * log10(folded / atPitch)) dB")
    }

    /// A one-shot region ignores note-off; a sustain loop loops while the key is held and then
    /// plays on to the sample's end.
    @Test func loopModesFollowTheKey() {
        let ramp: [Float] = (0..<200).map { Float($0) / 256 }
        let bank = SampleBank(samples: [ramp], sampleRate: 48_000)
        var shot = Region(sampleIndex: 0)
        shot.loopMode = .oneShot
        shot.envelope = Envelope(release: 0.001)
        let e = regionEngine(bank, [shot])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 10, note: 60))
        let out = render(e, 300)
        for i in 0..<200 { #expect(out[i] == bank.value(sample: 0, frame: i)) }

        var held = Region(sampleIndex: 0)
        held.loopMode = .sustain
        held.loopStart = 100
        held.loopEnd = 149
        held.envelope = Envelope(release: 10)
        let f = regionEngine(bank, [held])
        f.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        f.enqueue(.noteOff(frame: 300, note: 60))
        let looped = render(f, 600)
        for i in 150..<300 { #expect(looped[i] == bank.value(sample: 0, frame: 100 + (i - 100) % 50)) }
        // Note-off comes as the loop ends (frame 149 played at 299): the voice plays on, 150 to
        // 199 (under a 10 s release), and ends with the sample.
        for i in 300..<350 {
            let value = bank.value(sample: 0, frame: i - 150)
            #expect(looped[i] <= value && looped[i] > value * 0.998)
        }
        #expect(looped[350...].allSatisfy { $0 == 0 })
        #expect(f.activeVoiceCount == 0)
    }
}
