import BellkeysEngine
import BellkeysModel
import Glibc
import Testing

// Pitch bend and the regions' low-pass filters.

/// Pitch bend: ±2 semitones by default, the range set by RPN 0, applied at its frame to every
/// pitched voice of its channel; ignored by instruments that do not follow it.
@Suite struct PitchBend {
    func sineEngine(follows: Bool, bendRange: BendRange? = nil, reach: Double = 1) -> Engine {
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
        instrument.pitchBendReach = reach
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

    /// A SoundFont preset's wheel reaches 127/128 of the range, as FluidSynth's default modulator
    /// moves it: +198.41 cents at the top of 2 semitones, −198.44 at the bottom; with RPN 0 at
    /// 12 semitones, −1,190.6. A voice struck while bent starts there.
    @Test func aSoundFontsWheelReaches127Of128() {
        let e = sineEngine(follows: true, reach: 127.0 / 128)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.pitchBend(frame: 24_000, value: 16_383))
        e.enqueue(.pitchBend(frame: 48_000, value: 0))
        for (controller, value) in [(101, 0), (100, 0), (6, 12), (38, 0)] {
            e.enqueue(.control(frame: 71_000, controller: controller, value: value))
        }
        e.enqueue(.control(frame: 71_000, controller: 120, value: 0)) // the first voice stops
        e.enqueue(.noteOn(frame: 72_000, note: 60, velocity: 127))
        let out = render(e, 96_000)
        #expect(abs(cents(measuredFrequency(out, 100..<23_990), 1_000)) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 24_010..<47_990), 1_000) - 12_700.0 * 2 / 128 * 8_191 / 8_192) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 48_010..<70_990), 1_000) + 12_700.0 * 2 / 128) < 0.01)
        #expect(abs(cents(measuredFrequency(out, 72_100..<96_000), 1_000) + 12_700.0 * 12 / 128) < 0.01)
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
