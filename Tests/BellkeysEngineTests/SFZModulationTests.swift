import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// The modulation sources by sfizz's rules (an SFZ region's `pitcheg`, `fileg` and LFOs): its
/// envelopes stepped frame by frame, its LFOs' waves, and a voice's pitch, filter and level
/// following them in 16-frame ticks.
@Suite struct SFZModulation {
    /// At 1,000 frames a second a time of t s is 1,000 t frames: delay 3 frames at a start of
    /// 20 %, an attack of 4 (a quarter a frame), hold 2, a decay of 50 ms (e^−0.18 a frame) to
    /// a sustain of 50 %, a release of 20 ms (e^−0.45 a frame).
    static let envelope: ModulationEnvelope = {
        var e = ModulationEnvelope(delay: 0.003, attack: 0.004, hold: 0.002, decay: 0.05, sustain: 0.5, release: 0.02)
        e.start = 0.2
        return e
    }()

    static func frames(_ e: ModulationEnvelope, _ count: Int, releaseAt: Int? = nil) -> [Double] {
        let r = SFZEnvelopeRates(e, sampleRate: 1_000)
        var p = SFZEnvelopeProgress(r)
        return (0..<count).map { i in
            if i == releaseAt { p.release() }
            return p.next(r)
        }
    }

    /// Frame by frame, as sfizz's `ADSREnvelope` runs: the start through the delay; the attack's
    /// steps (its first already a step up; the step that reaches 1 goes to the hold unheard);
    /// 1 through the hold; the decay falling by e^−0.18 a frame until it would pass the sustain,
    /// which it then holds.
    @Test func theEnvelopeRunsFrameByFrameAsSfizzsDoes() {
        let got = Self.frames(Self.envelope, 16)
        let d = exp(-0.18)
        let expected = [0.2, 0.2, 0.2, 0.45, 0.7, 0.95, 1, 1, d, d * d, d * d * d, 0.5, 0.5, 0.5, 0.5, 0.5]
        #expect(zip(got, expected).allSatisfy { abs($0 - $1) < 1e-12 }, "\(got)")
    }

    /// A release falls from where the envelope is by e^−0.45 a frame until it passes 10^−4, then
    /// in a line to 0 over 50 ms (50 frames here), from its last level; a release of 0 is that
    /// line at once, from wherever the envelope was.
    @Test func aReleaseFallsThenEndsInA50MillisecondLine() {
        let got = Self.frames(Self.envelope, 90, releaseAt: 12) // in the sustain
        let r = exp(-0.45)
        var level = 0.5, expected: [Double] = []
        while level * r > 1e-4 {
            level *= r
            expected.append(level)
        }
        let step = level / 50
        for k in 1..<50 { expected.append(level - Double(k) * step) }
        #expect(got[11] == 0.5)
        #expect(zip(got[12...], expected).allSatisfy { abs($0 - $1) < 1e-12 }, "\(Array(got[12...]))")
        #expect(got[(12 + expected.count + 1)...].allSatisfy { $0 == 0 })

        var instant = Self.envelope
        instant.release = 0
        let line = Self.frames(instant, 20, releaseAt: 4) // in the attack, at 0.45
        #expect(abs(line[4] - (0.45 - 0.45 / 50)) < 1e-12 && abs(line[5] - (0.45 - 2 * 0.45 / 50)) < 1e-12)
    }

    /// A decay or release shorter than 6 ms takes 6 ms (sfizz's floor), and a sustain at or
    /// below 0.32 % releases by itself; a note-off in the delay releases from the start once the
    /// delay ends.
    @Test func sfizzsFloorsAndItsFreeRunningSustain() {
        let r = SFZEnvelopeRates(ModulationEnvelope(decay: 0.001, sustain: 0.001, release: 0.001), sampleRate: 1_000)
        #expect(abs(r.decayRate - exp(-1.5)) < 1e-15 && abs(r.releaseRate - exp(-1.5)) < 1e-15)
        var p = SFZEnvelopeProgress(r)
        var levels: [Double] = []
        for _ in 0..<40 { levels.append(p.next(r)) }
        // 1 decays by e^−1.5 a frame to the sustain (0.001), which releases on the same frame.
        let d = exp(-1.5)
        #expect(abs(levels[0] - d) < 1e-15 && abs(levels[3] - pow(d, 4)) < 1e-15)
        #expect(p.stage == .fadeout || p.stage == .finished)
        #expect(levels.last! < 1e-4)

        var inDelay = Self.frames(Self.envelope, 6, releaseAt: 1)
        let rate = exp(-0.45)
        #expect(inDelay[..<3] == [0.2, 0.2, 0.2] && abs(inDelay[3] - 0.2 * rate) < 1e-12)
        inDelay = Self.frames(Self.envelope, 6, releaseAt: 4) // in the attack, after 0.45
        #expect(abs(inDelay[4] - 0.45 * rate) < 1e-12)
    }

    /// A tick wholly within one stage is taken in one step (powers of the frame's factor, or
    /// whole ticks of the delay, the hold, the closing line): the same levels, to 10^−12, as
    /// the tick's 16 frames stepped one by one, through every stage. A note-off in the sustain;
    /// a sustain of 0 (released once the decay passes 0.001) and a note-off in the delay; a
    /// release of 0 (the closing line at once).
    @Test(arguments: [(0.3, 0.1, 400), (0, 0.1, 2), (0.5, 0, 300)])
    func aTickInOneStepIsTheFramesArithmetic(sustain: Double, release: Double, releaseAt: Int) {
        var e = ModulationEnvelope(
            delay: 0.002, attack: 0.01, hold: 0.003, decay: 0.2, sustain: sustain, release: release)
        e.start = 0.1
        let r = SFZEnvelopeRates(e, sampleRate: 48_000)
        var whole = SFZEnvelopeProgress(r), framed = SFZEnvelopeProgress(r)
        var worst = 0.0, stages: Set<UInt8> = []
        for k in 0..<1_000 {
            if k == releaseAt {
                whole.release()
                framed.release()
            }
            let got = whole.tick(r, frames: 16)
            var levels: [Double] = []
            for _ in 0..<16 { levels.append(framed.next(r)) }
            worst = max(worst, abs(got.first - levels[0]), abs(got.middle - levels[8]), abs(whole.level - framed.level))
            stages.insert(whole.stage.rawValue)
        }
        #expect(worst < 1e-12)
        // (The delay, the closing line and the end met every time; and the rest, the first.)
        #expect(stages.isSuperset(of: releaseAt == 400 ? [0, 1, 3, 4, 5, 6, 7] : [0, 6, 7]), "\(stages)")
    }

    /// sfizz's waves at a quarter, a half and three quarters of the period, and an LFO's delay
    /// (rounded up to a frame) and fade (a line from 0).
    @Test func theWavesAreSfizzs() {
        func at(_ wave: LFOWave, _ p: Double) -> Double { lfoWave(wave.rawValue, p) }
        #expect(at(.triangle, 0) == 0 && at(.triangle, 0.25) == 1 && at(.triangle, 0.75) == -1)
        #expect(at(.sine, 0.25) == 1 && at(.sine, 0.75) == -1 && at(.sine, 0.5) == 0)
        #expect(abs(at(.sine, 1.0 / 8) - 0.75) < 1e-12) // the parabola, not sin(π/4)
        #expect(at(.square, 0.49) == 1 && at(.square, 0.5) == 0)
        #expect(at(.pulse75, 0.7) == 1 && at(.pulse25, 0.3) == 0 && at(.pulse12, 0.1) == 1)
        #expect(at(.rampUp, 0.25) == -0.5 && at(.sawDown, 0.25) == 0.5)

        var lfo = ModulationLFO(delay: 0.0105, frequency: 250)
        lfo.wave = .triangle
        lfo.fade = 0.004
        let t = SFZLFORates(lfo, sampleRate: 1_000) // delay 11 frames, a quarter period a frame
        #expect(t.delay == 11)
        #expect(sfzLFO(t, age: 10) == 0 && sfzLFO(t, age: 11) == 0)
        #expect(abs(sfzLFO(t, age: 12) - 0.25) < 1e-12) // 1 at a quarter, faded to a quarter
        #expect(abs(sfzLFO(t, age: 15)) < 1e-12 && abs(sfzLFO(t, age: 16) - 1) < 1e-12)
    }

    /// An engine at 48 kHz playing a looped sine at its own pitch, under `modulation` by
    /// sfizz's rules.
    func engine(_ modulation: VoiceModulation, cutoff: Double? = nil) -> Engine {
        let bank = SampleBank(samples: [loopedSine(cycles: 480, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        var m = modulation
        m.rules = .sfz
        region.modulation = m
        if let cutoff {
            region.filter = .lowPass2
            region.cutoff = cutoff
        }
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        return Engine(bank: bank, instrument: instrument, configuration: config)
    }

    /// The pitch moves every 16 frames, to the envelope's level at the tick's middle frame
    /// (sfizz's moves frame by frame: a sweep held through a tick at its middle is neither early
    /// nor late), and the voice reads 16 × that increment in each tick.
    @Test func thePitchFollowsTheEnvelopeAtEachTicksMiddle() {
        let modulation = VoiceModulation(
            envelope: ModulationEnvelope(attack: 0.002, decay: 0.004, sustain: 0.25), envelopeToPitchCents: 1_200)
        let e = engine(modulation)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let r = SFZEnvelopeRates(modulation.envelope, sampleRate: 48_000)
        var model = SFZEnvelopeProgress(r)
        var read: UInt64 = 0
        for k in 0..<40 {
            _ = render(e, k == 0 ? 1 : 16) // into tick k: its first frame
            let level = model.tick(r, frames: 16).middle
            let expected = UInt64(4_294_967_296 * exp2Fast(level) + 0.5)
            let slot = Int(e.pool.active[0])
            #expect(e.pool.pitchedVoices[slot].increment == expected, "tick \(k)")
            #expect(e.pool.pitchedVoices[slot].phaseFrames == read + expected, "tick \(k)")
            read += 16 * expected
        }
    }

    /// A voice faded rather than released (choked, stolen, `off_time`) releases its envelopes
    /// at its next tick, as sfizz's `Voice::Impl::off` does: the pitch glides back.
    @Test func aFadedVoiceReleasesItsEnvelopes() {
        let e = engine(VoiceModulation(envelope: ModulationEnvelope(), envelopeToPitchCents: 1_200))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        _ = render(e, 160)
        let slot = Int(e.pool.active[0])
        #expect(e.pool.sfzVoices[slot].pitchEnvelope.stage == .sustain)
        #expect(e.pool.pitchedVoices[slot].increment == 1 << 33)
        e.fade(slot: slot, frames: 4_800)
        _ = render(e, 16)
        #expect(e.pool.sfzVoices[slot].pitchEnvelope.stage == .fadeout)
        #expect(e.pool.pitchedVoices[slot].increment < 1 << 33)
    }

    /// A cutoff that jumps (an envelope with a delay of 1 ms, then no attack: 1,000 Hz to
    /// 4,000 Hz) is reached as sfizz's smoother reaches it: a share
    /// 1 − e^(−16 / 48) of the way left at each 16-frame tick, in a line within the tick.
    @Test func aJumpingCutoffIsReachedThroughSfizzsSmoother() {
        var modulation = VoiceModulation(
            envelope: ModulationEnvelope(), envelopeToPitchCents: 0, envelopeToCutoffCents: 2_400)
        modulation.envelope = ModulationEnvelope(delay: 0.001)
        let e = engine(modulation, cutoff: 1_000)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        _ = render(e, 48) // the delay: 48 frames, three ticks at 1,000 Hz
        let slot = Int(e.pool.active[0])
        let before = lowPassCoefficients(cutoff: 1_000, q: 0.707_106_781_186_547_5, sampleRate: 48_000)
        let after = lowPassCoefficients(cutoff: 4_000, q: 0.707_106_781_186_547_5, sampleRate: 48_000)
        #expect(e.pool.pitchedVoices[slot].filterCoefficients == before)
        let share = Float(1 - exp(-1.0 / 3))
        var expected = before
        for k in 0..<12 {
            _ = render(e, 16)
            expected += share * (after - expected)
            let got = e.pool.pitchedVoices[slot].filterCoefficients
            #expect(((got - expected) * (got - expected)).max() < 1e-12, "tick \(k): \(got) against \(expected)")
        }
    }

    /// The tremolo is plain decibels, above the envelope's full level too (FluidSynth's never
    /// rises above it): 6 dB at the LFO's peak is a factor of 10^(6/20), reached at the end of
    /// the tick whose end meets the peak.
    @Test func theTremoloIsPlainDecibels() {
        var modulation = VoiceModulation(modulationLFO: ModulationLFO(delay: 0, frequency: 1))
        modulation.modulationLFO.wave = .sine
        modulation.modulationLFOToVolumeDecibels = 6
        let e = engine(modulation)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        // The peak, a quarter of a second in, ends tick 749 (frames 11,984 to 11,999).
        _ = render(e, 11_985)
        let slot = Int(e.pool.active[0])
        #expect(abs(Double(e.pool.modulatedVoices[slot].tremoloTarget) - pow(10, 6.0 / 20)) < 1e-5)
        // A quarter later, the sine is back to 0 (plain: 0 dB).
        _ = render(e, 12_000)
        #expect(abs(e.pool.modulatedVoices[slot].tremoloTarget - 1) < 1e-5)
    }
}
