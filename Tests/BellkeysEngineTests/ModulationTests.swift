import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// The modulation envelope: its stages counted in 64-frame ticks and stepped as FluidSynth 2.3
/// steps them, and a voice's pitch following it tick by tick.
@Suite struct ModulationEnvelopes {
    static let rate = 44_100
    /// The seconds of `ticks` ticks at 44.1 kHz.
    static func seconds(_ ticks: Double) -> Double { ticks * 64 / Double(rate) }
    /// Delay 2 ticks (2.5 cut down), attack 3 (1 + 2.5 cut down), hold 1, decay 4 (both rounded)
    /// to a sustain of 0.4, release 5 (1 + 4.5 cut down); an octave at full level.
    static let modulation = VoiceModulation(
        envelope: ModulationEnvelope(
            delay: seconds(2.5), attack: seconds(2.5), hold: seconds(1), decay: seconds(4), sustain: 0.4,
            release: seconds(4.5)),
        envelopeToPitchCents: 1_200)
    /// 1/n in single precision, as FluidSynth makes a step.
    static func step(_ n: Int) -> Double { Double(Float(1) / Float(n)) }
    /// The convex curve at x in 0...127, from its formula (1 + 5/12 log₁₀(i/127) at the points,
    /// straight between them).
    static func convexAt(_ x: Double) -> Double {
        func point(_ i: Int) -> Double { i == 0 ? 0 : 1 + 5.0 / 12.0 * log10(Double(i) / 127) }
        let i = Int(x)
        return point(i) + (point(i + 1) - point(i)) * (x - Double(i))
    }

    /// The convex curve as the engine keeps it (for the life of the tests; only ever read).
    nonisolated(unsafe) static let curve: UnsafePointer<Double> = {
        let curve = UnsafeMutablePointer<Double>.allocate(capacity: 128)
        curve.initialize(from: convexCurve(), count: 128)
        return UnsafePointer(curve)
    }()

    @Test func stagesAreCountedInTicksAsFluidSynthCountsThem() {
        let t = ModulationTicks(Self.modulation, sampleRate: Self.rate)
        #expect(t.delay == 2 && t.attack == 3 && t.hold == 1 && t.decay == 4 && t.release == 5)
        #expect(t.attackStep == Self.step(3) && t.decayStep == -0.25 && t.releaseStep == -Self.step(5))
        #expect(t.sustain == 0.4 && t.toPitchCents == 1_200)
        // No times at all: no delay, an attack of one tick, no hold or decay, a release of one.
        let none = ModulationTicks(VoiceModulation(), sampleRate: Self.rate)
        #expect(none.delay == 0 && none.attack == 1 && none.attackStep == 1 && none.hold == 0 && none.decay == 0)
        #expect(none.release == 1 && none.releaseStep == -1)
    }

    /// Tick by tick: 0 through the delay; the attack's steps through the convex curve; the top
    /// (the third step passes 1 and is held there, into the hold); the decay by quarters until
    /// it would pass the sustain level, which it then holds.
    @Test func theLevelMovesTickByTick() {
        let t = ModulationTicks(Self.modulation, sampleRate: Self.rate)
        let curve = Self.curve
        var v = ModulatedVoice()
        var heard: [Double] = []
        for _ in 0..<10 {
            stepModulation(&v, t, curve: curve)
            heard.append(heardLevel(v, curve: curve))
        }
        let third = Self.step(3)
        let expected = [
            0, 0, Self.convexAt(127 * third), Self.convexAt(127 * (third + third)), 1, 1, 0.75, 0.5, 0.4, 0.4,
        ]
        #expect(zip(heard, expected).allSatisfy { abs($0 - $1) < 1e-12 })
        #expect(v.stage == .sustain)
    }

    /// A note-off in the attack: the release starts at the next tick from the level heard (the
    /// curve's) and falls a fifth of the way each tick to 0, where the envelope ends.
    @Test func aReleaseInTheAttackFallsFromTheCurvesLevel() {
        let t = ModulationTicks(Self.modulation, sampleRate: Self.rate)
        let curve = Self.curve
        var v = ModulatedVoice()
        for _ in 0..<3 { stepModulation(&v, t, curve: curve) } // delay, delay, the first step up
        v.releaseAsked = true
        var levels: [Double] = []
        for _ in 0..<6 {
            stepModulation(&v, t, curve: curve)
            levels.append(heardLevel(v, curve: curve))
        }
        var level = Self.convexAt(127 * Self.step(3))
        var expected: [Double] = []
        for _ in 0..<6 {
            level = max(0, level - Self.step(5))
            expected.append(level)
        }
        #expect(zip(levels, expected).allSatisfy { abs($0 - $1) < 1e-12 })
        #expect(v.stage == .finished)
    }

    /// An engine at 44.1 kHz playing a looped sine at its own pitch under the envelope (an
    /// octave at the top): each tick's increment is the sample's step × 2^(level heard), and
    /// the voice reads exactly 64 × that increment in each tick.
    func engine(bend: Bool = false, modulation: VoiceModulation = Self.modulation) -> Engine {
        let bank = SampleBank(samples: [loopedSine(cycles: 441, frames: 44_100)], sampleRate: Self.rate)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 44_099
        region.modulation = modulation
        var config = EngineConfiguration(sampleRate: Self.rate)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        instrument.followsPitchBend = bend
        return Engine(bank: bank, instrument: instrument, configuration: config)
    }

    @Test func theVoicesPitchFollowsTheEnvelopeTickByTick() {
        let e = engine()
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let t = ModulationTicks(Self.modulation, sampleRate: Self.rate)
        let curve = Self.curve
        var model = ModulatedVoice()
        var read: UInt64 = 0
        for k in 0..<12 {
            _ = render(e, k == 0 ? 1 : 64) // into tick k: its first frame
            stepModulation(&model, t, curve: curve)
            let expected = UInt64(4_294_967_296 * exp2Fast(heardLevel(model, curve: curve)) + 0.5)
            let slot = Int(e.pool.active[0])
            #expect(e.pool.pitchedVoices[slot].increment == expected, "tick \(k)")
            #expect(e.pool.pitchedVoices[slot].phaseFrames == read + expected, "tick \(k)")
            read += 64 * expected
        }
    }

    /// Where the output's blocks fall does not move the ticks: 1,000 frames rendered whole, in
    /// 64-frame blocks and in 17-frame ones are the same samples, the pitch's and the filter's.
    @Test(arguments: [false, true])
    func blocksDoNotMoveTheTicks(filtered: Bool) {
        var outputs: [[Float]] = []
        for block in [1_000, 64, 17] {
            let e = filtered ? filteredEngine() : engine()
            e.enqueue(.noteOn(frame: 5, note: 60, velocity: 127))
            e.enqueue(.noteOff(frame: 700, note: 60))
            outputs.append(renderStereo(e, 1_000, block: block).left)
        }
        #expect(outputs[0] == outputs[1] && outputs[0] == outputs[2])
        #expect(outputs[0][5...].contains { $0 != 0 })
    }

    /// The wheel and the envelope multiply: at the envelope's top a voice plays an octave up;
    /// bent to the wheel's top, that octave and 8,191/8,192 of 200 cents more, at once.
    @Test func theWheelAndTheEnvelopeMultiply() {
        let e = engine(bend: true)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        _ = render(e, 64 * 4 + 1) // tick 4: the top
        let slot = Int(e.pool.active[0])
        #expect(e.pool.pitchedVoices[slot].increment == 1 << 33)
        e.enqueue(.pitchBend(frame: Int64(64 * 4 + 10), value: 16_383))
        _ = render(e, 20)
        let bend = exp2Fast(200.0 * 8_191 / 8_192 / 1_200)
        #expect(e.pool.pitchedVoices[slot].increment == UInt64(Double(1 << 32) * bend * 2 + 0.5))
        #expect(e.pool.modulatedVoices[slot].bend == bend)
    }

    /// A 4 kHz sine (at its own pitch) through a low-pass at 500 Hz that the envelope opens 3
    /// octaves: held at the top for half a second, then down to nothing over 0.2 s.
    func filteredEngine(
        frequency: Int = 4_000,
        modulation: VoiceModulation = VoiceModulation(
            envelope: ModulationEnvelope(hold: 0.5, decay: 0.2, sustain: 0), envelopeToCutoffCents: 3_600)
    ) -> Engine {
        let bank = SampleBank(samples: [loopedSine(cycles: frequency, frames: 44_100)], sampleRate: Self.rate)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 44_099
        region.filter = .lowPass2
        region.cutoff = 500
        region.modulation = modulation
        var config = EngineConfiguration(sampleRate: Self.rate)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.control(frame: 0, controller: 7, value: 127))
        return e
    }

    /// The biquad's gain at `frequency` for its coefficients (b0, b1, b2, a1, a2).
    static func gain(_ k: SIMD8<Float>, at frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / Double(rate)
        func magnitude(_ c0: Double, _ c1: Double, _ c2: Double) -> Double {
            let re = c0 + c1 * cos(w) + c2 * cos(2 * w), im = -c1 * sin(w) - c2 * sin(2 * w)
            return (re * re + im * im).squareRoot()
        }
        return magnitude(Double(k[0]), Double(k[1]), Double(k[2])) / magnitude(1, Double(k[3]), Double(k[4]))
    }

    /// The cutoff is the region's × 2^(level × cents / 1200) at each tick: at once at the first
    /// (the attack of one tick is at the top: 4 kHz), then reached over the 64 frames of a tick,
    /// a step a frame, landing on them (at the decay's first tick the level is 1 − 1/ticks).
    @Test func theCutoffFollowsTheEnvelopeTickByTick() {
        let e = filteredEngine()
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        _ = render(e, 1)
        let slot = Int(e.pool.active[0])
        let q = 0.707_106_781_186_547_5
        #expect(
            e.pool.pitchedVoices[slot].filterCoefficients
                == lowPassCoefficients(cutoff: 4_000, q: q, sampleRate: 44_100))
        #expect(e.pool.modulatedVoices[slot].filterStepsLeft == 0)
        let t = ModulationTicks(
            VoiceModulation(envelope: ModulationEnvelope(hold: 0.5, decay: 0.2)), sampleRate: Self.rate)
        let holdEnds = 64 * (1 + t.hold) // the attack's tick, then the hold's
        _ = render(e, holdEnds - 1) // up to the decay's first tick
        let before = e.pool.pitchedVoices[slot].filterCoefficients
        let level = 1 - Self.step(t.decay)
        let target = lowPassCoefficients(cutoff: 500 * exp2Fast(level * 3_600 / 1_200), q: q, sampleRate: 44_100)
        _ = render(e, 1) // its first frame
        #expect(e.pool.modulatedVoices[slot].filterStepsLeft == 63)
        #expect(e.pool.modulatedVoices[slot].filterSteps == (target - before) / 64)
        #expect(e.pool.pitchedVoices[slot].filterCoefficients == before + (target - before) / 64)
        _ = render(e, 63)
        #expect(e.pool.pitchedVoices[slot].filterCoefficients == target)
        #expect(e.pool.modulatedVoices[slot].filterStepsLeft == 0)
    }

    /// In the attack the cutoff follows the level through the convex curve, as the pitch does
    /// (FluidSynth's `modenv_val` moves both): an attack of 3 ticks opens 500 Hz three octaves,
    /// its second tick (the level at two thirds) at 2^(3 × convex(127 × 2/3)), not 2^(3 × 2/3).
    @Test func theCutoffFollowsTheConvexCurveInTheAttack() {
        let e = filteredEngine(
            modulation: VoiceModulation(
                envelope: ModulationEnvelope(attack: Self.seconds(2.5), sustain: 1), envelopeToCutoffCents: 3_600))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        _ = render(e, 64 + 1) // the second tick's first frame: the coefficients move toward its cutoff
        let slot = Int(e.pool.active[0])
        let third = Self.step(3)
        let level = Self.convexAt(127 * (third + third))
        let target = lowPassCoefficients(
            cutoff: 500 * exp2Fast(level * 3_600 / 1_200), q: 0.707_106_781_186_547_5, sampleRate: 44_100)
        #expect(e.pool.modulatedVoices[slot].filterTarget == target)
        #expect(level > 0.9 && level < 0.95) // (a straight attack's would be two thirds)
    }

    /// What comes out: while the envelope holds, the sine at the 4 kHz cutoff's gain (−3 dB);
    /// once it has fallen, at the 500 Hz cutoff's (−36 dB); each to 0.01 dB.
    @Test func theSineComesOutAtTheMovingCutoffsGain() {
        let e = filteredEngine()
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let out = render(e, 44_100)
        let q = 0.707_106_781_186_547_5
        func decibels(_ range: Range<Int>) -> Double {
            10 * log10(power(Array(out[range])) / (0.5 * 0.5 / 2))
        }
        func expected(_ cutoff: Double) -> Double {
            20 * log10(Self.gain(lowPassCoefficients(cutoff: cutoff, q: q, sampleRate: 44_100), at: 4_000))
        }
        #expect(abs(decibels(4_410..<22_050) - expected(4_000)) < 0.01)
        #expect(abs(decibels(33_075..<44_100) - expected(500)) < 0.01)
        #expect(expected(4_000) < -2.9 && expected(4_000) > -3.1 && expected(500) < -35)
    }

    /// The LFOs as FluidSynth steps them: at 44.1 kHz a SoundFont's default LFO (8.176 Hz, its
    /// "no delay" of 2^-10 s: 43 frames) stands still in the first tick, then moves by
    /// 4 × 64 × 8.176 / 44,100 a tick, turning back at 1. The vibrato (100 cents at the peak)
    /// and the modulation LFO (a fifth on the pitch, later: it waits 0.02 s) add their cents.
    @Test func theLFOsMoveThePitchTickByTick() {
        let sfDefault = ModulationLFO(delay: 1.0 / 1_024)
        let e = engine(
            modulation: VoiceModulation(
                modulationLFO: ModulationLFO(delay: 0.02), modulationLFOToPitchCents: 700, vibratoLFO: sfDefault,
                vibratoLFOToPitchCents: 100))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let step = 4 * 64 * 8.175_798_915_643_707 / 44_100
        #expect(abs(step - 0.047_460_420_009_178_89) < 1e-15)
        var vibrato = 0.0, vibratoStep = step, modulation = 0.0, modulationStep = step
        var turned = false
        for k in 0..<30 {
            _ = render(e, k == 0 ? 1 : 64)
            if 64 * k >= 43 {
                vibrato += vibratoStep
                if vibrato > 1 {
                    (vibrato, vibratoStep, turned) = (2 - vibrato, -vibratoStep, true)
                }
            }
            if 64 * k >= 882 { modulation += modulationStep } // 0.02 s: 882 frames
            let cents = vibrato * 100 + modulation * 700
            let expected = UInt64(4_294_967_296 * exp2Fast(cents / 1_200) + 0.5)
            let slot = Int(e.pool.active[0])
            #expect(e.pool.pitchedVoices[slot].increment == expected, "tick \(k)")
        }
        #expect(turned && vibrato < 1)
    }

    /// The tremolo (a 6 dB modulation LFO on the volume, 20 Hz) as FluidSynth's amplitude moves:
    /// a factor of 10^(min(envelope's attenuation, lfo × 60 cB) / 200) on the level, reached in
    /// a line over each tick from the last tick's. Held at full level it only takes level away;
    /// under a sustain at a quarter (12 dB down) it moves both ways. Each frame is the same voice
    /// with no tremolo times that factor.
    @Test(arguments: [1.0, 0.25])
    func theTremoloMovesTheLevelTickByTick(sustain: Double) {
        func engine(decibels: Double) -> Engine {
            let bank = SampleBank(samples: [loopedSine(cycles: 441, frames: 44_100)], sampleRate: Self.rate)
            var region = Region(sampleIndex: 0)
            region.loopMode = .continuous
            region.loopEnd = 44_099
            region.envelope = Envelope(decay: 0.001, sustain: sustain)
            region.modulation = VoiceModulation(
                modulationLFO: ModulationLFO(delay: 0, frequency: 20), modulationLFOToVolumeDecibels: decibels)
            var config = EngineConfiguration(sampleRate: Self.rate)
            config.limiterThreshold = 100
            var instrument = Instrument(keys: [])
            instrument.regions = [region]
            return Engine(bank: bank, instrument: instrument, configuration: config)
        }
        var outputs: [[Float]] = []
        for decibels in [6.0, 0.0] {
            let e = engine(decibels: decibels)
            e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
            outputs.append(renderStereo(e, 64 * 40, block: 100).left)
        }
        let attenuation = sustain < 1 ? -200 * log10(sustain) : 0
        let step = 4 * 64 * 20.0 / 44_100
        var lfo = 0.0, direction = 1.0, last = 1.0, worst = 0.0, lowest = 1.0, highest = 1.0
        var measuredLowest = 1.0, measuredHighest = 1.0
        for k in 0..<40 {
            lfo += direction * step
            if lfo > 1 { (lfo, direction) = (2 - lfo, -1) } else if lfo < -1 { (lfo, direction) = (-2 - lfo, 1) }
            // The envelope's attenuation is where its piece under way heads: in tick 0, the
            // sustain's (its decay takes 44 frames).
            let factor = pow(10, min(attenuation, lfo * 60) / 200)
            for j in 0..<64 where abs(outputs[1][64 * k + j]) > 1e-3 {
                let expected = last + (factor - last) * Double(j) / 64
                let got = Double(outputs[0][64 * k + j] / outputs[1][64 * k + j])
                worst = max(worst, abs(got - expected))
                (measuredLowest, measuredHighest) = (min(measuredLowest, got), max(measuredHighest, got))
            }
            (last, lowest, highest) = (factor, min(lowest, factor), max(highest, factor))
        }
        #expect(worst < 2e-6, "the worst frame's factor is \(worst) off")
        // Nearly 6 dB down at the LFO's lowest tick (-0.98) and up at its highest (0.96), up only
        // under the sustain.
        #expect(abs(measuredLowest - lowest) < 1e-5 && 20 * log10(lowest) < -5.7)
        #expect(abs(measuredHighest - highest) < 1e-5 && 20 * log10(highest) > (sustain < 1 ? 5.7 : -1e-9))
        #expect(sustain < 1 || highest == 1)
    }
}
