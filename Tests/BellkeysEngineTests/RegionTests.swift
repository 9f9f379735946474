import BellkeysEngine
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

/// SplitMix64 from the engine's seed, as a test's own oracle of the random values note-ons draw.
struct Oracle {
    var state: UInt64 = 0x6265_6C6C_6B65_7973
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1p-53
    }
}

/// Which recording a strike plays: samples of constant levels 1/4, 1/8, 1/16 ... tell them apart.
@Suite struct RegionSelection {
    let levels: [Float] = [0.25, 0.125, 0.0625, 0.03125]
    var bank: SampleBank { SampleBank(samples: levels.map { constant($0, 40) }, sampleRate: 48_000) }

    /// The level each of `count` strikes of `note` (one every 100 frames, velocity 127) played.
    func strikes(_ e: Engine, note: Int = 60, count: Int, between: (Int) -> [EngineEvent] = { _ in [] }) -> [Float] {
        var heard: [Float] = []
        for k in 0..<count {
            for event in between(k) { e.enqueue(event) }
            e.enqueue(.noteOn(frame: Int64(100 * k), note: note, velocity: 127))
            let out = render(e, 100)
            heard.append(out[10])
        }
        return heard
    }

    /// Round robin: three recordings of a key (`seq_length=3`) take turns, strike after strike.
    @Test func roundRobinTakesTurns() {
        let regions = (0..<3).map { k in
            var r = Region(sampleIndex: k)
            r.keyRange = 60...60
            r.sequenceLength = 3
            r.sequencePosition = k + 1
            return r
        }
        let heard = strikes(regionEngine(bank, regions), count: 7)
        #expect(heard == [0.25, 0.125, 0.0625, 0.25, 0.125, 0.0625, 0.25])
    }

    /// Random: `lorand`/`hirand` split [0, 1); each note-on draws once from a generator with a
    /// fixed seed, so the same strikes choose the same recordings every time.
    @Test func randomChoiceIsRepeatable() {
        var low = Region(sampleIndex: 0), high = Region(sampleIndex: 1)
        low.randomHigh = 0.5
        high.randomLow = 0.5
        var oracle = Oracle()
        let expected = (0..<200).map { _ in oracle.next() < 0.5 ? Float(0.25) : 0.125 }
        let heard = strikes(regionEngine(bank, [low, high]), count: 200)
        #expect(heard == expected)
        #expect(heard.filter { $0 == 0.25 }.count > 80 && heard.filter { $0 == 0.25 }.count < 120)
        #expect(strikes(regionEngine(bank, [low, high]), count: 200) == heard)
    }

    /// Keyswitches: a key in the instrument's keyswitch range chooses the articulation, sounds
    /// nothing and is not counted as unplayed; the default holds until one is struck.
    @Test func aKeyswitchChoosesTheArticulation() {
        var a = Region(sampleIndex: 0), b = Region(sampleIndex: 1)
        a.keyswitch = 24
        b.keyswitch = 25
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [a, b]
        instrument.keyswitchRange = 24...25
        instrument.defaultKeyswitch = 24
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        let heard = strikes(e, count: 3) { k in
            k == 1 ? [.noteOn(frame: Int64(100 * k), note: 25, velocity: 90)] : []
        }
        #expect(heard == [0.25, 0.125, 0.125])
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 0)
    }

    /// Controller ranges: a region sounds only while its controller (here CC1) lies in range.
    @Test func controllerRangesChoose() {
        var soft = Region(sampleIndex: 0), hard = Region(sampleIndex: 1)
        soft.controllerRanges = [1: 0...63]
        hard.controllerRanges = [1: 64...127]
        let heard = strikes(regionEngine(bank, [soft, hard]), count: 3) { k in
            k == 1 ? [.control(frame: Int64(100 * k), controller: 1, value: 64)] : []
        }
        #expect(heard == [0.25, 0.125, 0.125])
    }

    /// A release sample starts at the key's note-off, at the velocity the key was struck with.
    @Test func aReleaseSampleSoundsOnNoteOff() {
        var attack = Region(sampleIndex: 0), release = Region(sampleIndex: 1)
        attack.keyRange = 60...60
        release.keyRange = 60...60
        release.triggersOnRelease = true
        let e = regionEngine(bank, [attack, release])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 64))
        e.enqueue(.noteOff(frame: 60, note: 60))
        let out = render(e, 200)
        let g = Float(64 * 64) / Float(127 * 127)
        #expect(out[0..<40].allSatisfy { $0 == 0.25 * g })
        #expect(out[40..<60].allSatisfy { $0 == 0 })
        #expect(out[60..<100].allSatisfy { $0 == 0.125 * g })
        #expect(out[100...].allSatisfy { $0 == 0 })
    }

    /// Choke by group: a region of group 1 silences the voices of regions with `offBy` 1 (a
    /// 5 ms fade, 240 frames), not others.
    @Test func offByChokes() {
        let long = SampleBank(samples: [constant(0.25, 2_000), constant(0.125, 2_000)], sampleRate: 48_000)
        var open = Region(sampleIndex: 0), closed = Region(sampleIndex: 1)
        open.keyRange = 60...60
        open.offBy = 1
        closed.keyRange = 61...61
        closed.pitchKeycenter = 61
        closed.group = 1
        let e = regionEngine(long, [open, closed])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127))
        let out = render(e, 1_000)
        #expect(out[99] == 0.25)
        #expect(abs(out[100] - (0.25 + 0.125)) < 1e-6)
        #expect(abs(out[220] - (0.125 + 0.125)) < 1e-3)
        #expect(out[340...].allSatisfy { $0 == 0.125 })
    }

    /// `off_mode=time`: the choked voice fades over its own `off_time` (20 ms, 960 frames), not
    /// the engine's 5 ms.
    @Test func offTimeSetsTheChokesFade() {
        let long = SampleBank(samples: [constant(0.25, 4_000), constant(0.125, 4_000)], sampleRate: 48_000)
        var open = Region(sampleIndex: 0), closed = Region(sampleIndex: 1)
        open.keyRange = 60...60
        open.offBy = 1
        open.offFadeSeconds = 0.02
        closed.keyRange = 61...61
        closed.pitchKeycenter = 61
        closed.group = 1
        let e = regionEngine(long, [open, closed])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127))
        let out = render(e, 2_000)
        #expect(abs(out[100 + 480] - (0.125 + 0.125)) < 1e-3)
        #expect(out[100 + 959] > 0.125)
        #expect(out[(100 + 960)...].allSatisfy { $0 == 0.125 })
    }

    /// `trigger=first` sounds only with no other key of the channel held, `trigger=legato` only
    /// with one held; a key let go no longer counts, and all-notes-off lets go of every key.
    @Test func firstAndLegatoFollowTheHeldKeys() {
        let long = SampleBank(samples: [constant(0.25, 4_000), constant(0.125, 4_000)], sampleRate: 48_000)
        var first = Region(sampleIndex: 0), legato = Region(sampleIndex: 1)
        first.keyRange = 60...62
        first.heldKeys = .first
        legato.keyRange = 60...62
        legato.heldKeys = .legato
        let e = regionEngine(long, [first, legato])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) // nothing held: first
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127)) // 60 held: legato
        e.enqueue(.noteOff(frame: 200, note: 60))
        e.enqueue(.noteOn(frame: 300, note: 62, velocity: 127)) // 61 held: legato
        e.enqueue(.noteOff(frame: 400, note: 61))
        e.enqueue(.noteOff(frame: 400, note: 62))
        e.enqueue(.noteOn(frame: 500, note: 60, velocity: 127)) // nothing held: first
        e.enqueue(.control(frame: 600, controller: 123, value: 0))
        e.enqueue(.noteOn(frame: 700, note: 61, velocity: 127)) // all notes off: first
        let out = render(e, 800)
        #expect(out[50] == 0.25)
        #expect(out[150] == 0.375)
        #expect(out[350] == 0.5)
        #expect(out[550] == 0.75)
        #expect(out[750] == 1)
    }
}

/// Pitch bend: ±2 semitones by default, the range set by RPN 0, applied at its frame to every
/// pitched voice of its channel; ignored by instruments that do not follow it.
@Suite struct PitchBend {
    func sineEngine(follows: Bool, bendRange: BendRange? = nil) -> Engine {
        let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.bendRangeCents = bendRange
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        instrument.followsPitchBend = follows
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        return e
    }

    @Test func aBendMovesTheSoundingVoiceAtItsFrame() {
        let e = sineEngine(follows: true)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.pitchBend(frame: 24_000, value: 16_383))
        e.enqueue(.pitchBend(frame: 48_000, value: 0))
        e.enqueue(.pitchBend(frame: 72_000, value: 8_192))
        let out = render(e, 96_000)
        #expect(abs(cents(measuredFrequency(out, 100..<23_990), 1_000)) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 24_010..<47_990), 1_000) - 200 * 8_191 / 8_192) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 48_010..<71_990), 1_000) + 200) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 72_010..<96_000), 1_000)) < 0.01)
    }

    @Test func rpnZeroSetsTheRange() {
        let e = sineEngine(follows: true)
        for (controller, value) in [(101, 0), (100, 0), (6, 12), (38, 0)] {
            e.enqueue(.control(frame: 0, controller: controller, value: value))
        }
        e.enqueue(.pitchBend(frame: 0, value: 0))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) // starts bent
        let out = render(e, 24_000)
        #expect(abs(cents(measuredFrequency(out, 100..<24_000), 500)) < 0.01)
    }

    /// A region's own range (`bend_up`, `bend_down`) replaces the channel's, even one set by
    /// RPN 0: the wheel's top is `up` cents, its bottom `down`.
    @Test func aRegionsOwnRangeWins() {
        let e = sineEngine(follows: true, bendRange: BendRange(up: 700, down: -100))
        for (controller, value) in [(101, 0), (100, 0), (6, 12), (38, 0)] {
            e.enqueue(.control(frame: 0, controller: controller, value: value))
        }
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.pitchBend(frame: 0, value: 16_383))
        e.enqueue(.pitchBend(frame: 24_000, value: 0))
        // A note struck while the wheel is down starts at the region's bottom.
        e.enqueue(.control(frame: 47_000, controller: 123, value: 0))
        e.enqueue(.control(frame: 47_000, controller: 120, value: 0))
        e.enqueue(.noteOn(frame: 48_000, note: 60, velocity: 127))
        let out = render(e, 72_000)
        #expect(abs(cents(measuredFrequency(out, 100..<23_990), 1_000) - 700) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 24_010..<46_990), 1_000) + 100) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 48_100..<72_000), 1_000) + 100) < 0.01)
    }

    @Test func anInstrumentThatDoesNotFollowIgnoresIt() {
        let bent = sineEngine(follows: false), plain = sineEngine(follows: false)
        bent.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        bent.enqueue(.pitchBend(frame: 100, value: 16_383))
        bent.enqueue(.noteOn(frame: 2_000, note: 60, velocity: 127)) // struck while bent
        plain.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        plain.enqueue(.noteOn(frame: 2_000, note: 60, velocity: 127))
        let a = render(bent, 4_800), b = render(plain, 4_800)
        #expect(zip(a, b).filter { $0 != $1 }.count == 0, "frames that differ")
    }
}

/// A region's low-pass: its response at the cutoff exactly as designed, moved by velocity and key.
@Suite struct RegionFilters {
    /// The steady level (dB) of a looped sine at `hertz` through `region`'s filter, struck at `key`.
    func level(hertz: Int, _ configure: (inout Region) -> Void, key: Int = 60, velocity: Int = 127) -> Double {
        let bank = SampleBank(samples: [loopedSine(cycles: hertz, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.pitchKeycenter = key
        configure(&region)
        let e = regionEngine(bank, [region])
        e.enqueue(.noteOn(frame: 0, note: key, velocity: velocity))
        let out = render(e, 48_000)
        let g = Double(velocity * velocity) / (127 * 127)
        return 10 * log10(power(Array(out[9_600...])) / (0.125 * g * g))
    }

    @Test func twoPolesAtTheCutoffAreAtQ() {
        // The cookbook's low-pass is exactly Q at its cutoff: -3.01 dB at 1/√2, +3.0 dB with 6 dB of resonance.
        let flat = level(hertz: 1_000) {
            $0.filter = .lowPass2
            $0.cutoff = 1_000
        }
        #expect(abs(flat + 3.0103) < 0.01, "\(flat)")
        let resonant = level(hertz: 1_000) {
            $0.filter = .lowPass2
            $0.cutoff = 1_000
            $0.resonance = 6
        }
        #expect(abs(resonant - (6 - 3.0103)) < 0.01, "\(resonant)")
        let octaveUp = level(hertz: 4_000) {
            $0.filter = .lowPass2
            $0.cutoff = 1_000
        }
        #expect(octaveUp < -23 && octaveUp > -25, "\(octaveUp)") // 12 dB an octave, two octaves up
    }

    @Test func onePoleFollowsItsEquation() {
        let c = 1 - exp(-2 * Double.pi * 1_000 / 48_000)
        let w = 2 * Double.pi * 2_000 / 48_000
        // |H| = c / |1 − (1 − c) e^(−jw)|
        let re = 1 - (1 - c) * cos(w), im = (1 - c) * sin(w)
        let expected = 20 * log10(c / (re * re + im * im).squareRoot())
        let measured = level(hertz: 2_000) {
            $0.filter = .lowPass1
            $0.cutoff = 1_000
        }
        #expect(abs(measured - expected) < 0.01, "\(measured) against \(expected)")
    }

    @Test func velocityAndKeyMoveTheCutoff() {
        // 1200 cents of velocity tracking at 127: the cutoff doubles to 1 kHz, where the sine is.
        let byVelocity = level(hertz: 1_000) {
            $0.filter = .lowPass2
            $0.cutoff = 500
            $0.filterVelocityCents = 1_200
        }
        #expect(abs(byVelocity + 3.0103) < 0.01, "\(byVelocity)")
        // 100 cents a key, struck 12 keys above the centre (the sample then an octave up too).
        let byKey = level(
            hertz: 1_000,
            {
                $0.filter = .lowPass2
                $0.cutoff = 1_000
                $0.filterKeytrackCents = 100
                $0.pitchKeycenter = 48
            }, key: 60)
        #expect(abs(byKey + 3.0103) < 0.02, "\(byKey)")
    }
}

/// A map's keys that follow pitch bend keep their velocity timbre: a soft strike through the two
/// one-pole stages is the same, sample for sample, whether the key bends or not (unbent).
@Test func velocityTimbreSurvivesPitchBend() {
    let saw: [Float] = (0..<4_800).map { Float($0 % 97) / 97 - 0.5 }
    func take(bends: Bool) -> [Float] {
        let bank = SampleBank(samples: [saw], sampleRate: 48_000)
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [KeySettings(note: 60, sampleIndex: 0)])
        instrument.velocityTimbre = 1
        instrument.followsPitchBend = bends
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 30))
        return render(e, 4_800)
    }
    let plain = take(bends: false), bending = take(bends: true)
    #expect(plain == bending)
    #expect(power(Array(plain[100...])) < 0.5 * power(saw.map { $0 * Float(30 * 30) / Float(127 * 127) }))
}
