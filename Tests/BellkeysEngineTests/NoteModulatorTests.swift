import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// Note-on modulators: velocity to the cutoff, the key to the pitch, a controller to the level
/// and the resonance, summed as a voice starts.
@Suite struct NoteOnModulators {
    @Test func aVoiceStartsWithItsModulatorsSums() throws {
        let bank = SampleBank(samples: [loopedSine(cycles: 1_000, frames: 48_000)], sampleRate: 48_000)
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        region.filter = .lowPass2
        region.cutoff = 4_000
        region.noteModulators = NoteModulators(
            modulators: [
                Modulator(
                    source: .velocity, curve: Modulator.linear.map { 1 - $0 }, amount: -2_400, destination: .cutoffCents
                ),
                Modulator(source: .key, curve: Modulator.linear, amount: 128, destination: .pitchCents),
                Modulator(
                    source: .controller(2), curve: Modulator.linear, amountSource: .velocity,
                    amountCurve: Modulator.linear,
                    amount: -12, destination: .levelDecibels),
                Modulator(source: .controller(2), curve: Modulator.linear, amount: 6, destination: .resonanceDecibels),
            ], cutoffRange: 20...20_000, levelCeilingDecibels: 0)
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        let plain = { () -> Engine in
            var bare = region
            bare.noteModulators = nil
            var i = instrument
            i.regions = [bare]
            return Engine(bank: bank, instrument: i, configuration: config)
        }()
        e.enqueue(.control(frame: 0, controller: 2, value: 64))
        e.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        plain.enqueue(.noteOn(frame: 0, note: 64, velocity: 32))
        _ = render(e, 64)
        _ = render(plain, 64)
        let slot = Int(e.pool.active[0]), other = Int(plain.pool.active[0])
        // The key: 128 × 64/128 = 64 cents up.
        let increment = e.pool.pitchedVoices[slot].baseIncrement
        let base = plain.pool.pitchedVoices[other].baseIncrement
        #expect(increment == UInt64(Double(base) * exp2Fast(64.0 / 1_200) + 0.5))
        // Velocity 32: −2,400 × (1 − 32/128) = −1,800 cents off 4 kHz; CC2 at 64: Q up 3 dB.
        let q = 0.707_106_781_186_547_5 * pow(10, 3.0 / 20)
        let expected = lowPassCoefficients(cutoff: 4_000 * pow(2, -1_800.0 / 1_200), q: q, sampleRate: 48_000)
        let got = e.pool.pitchedVoices[slot].filterCoefficients
        #expect((0..<5).allSatisfy { abs(got[$0] - expected[$0]) < 1e-6 }, "\(got) against \(expected)")
        // CC2 at 64 × velocity 32: −12 × 0.5 × 0.25 = −1.5 dB (and never above the ceiling).
        let ratio = Double(e.pool.voices[slot].gain.target / plain.pool.voices[other].gain.target)
        #expect(abs(20 * log10(ratio) + 1.5) < 1e-4)
    }
}
