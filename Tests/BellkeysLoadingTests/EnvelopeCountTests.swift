import BellkeysModel
import Testing

@testable import BellkeysEngine
@testable import BellkeysFormats

/// The envelope counts written twice, on either side of the engine: the SoundFont reader counts
/// a region's envelope in FluidSynth's blocks (`soundFontEnvelope`), the engine counts a voice's
/// when note-on modulators move its times (`countedEnvelope`), and the same for the modulation
/// envelope (`soundFontModulation` and `ModulationTicks` against `countedModulation`). Unmoved,
/// they must agree.
@Suite struct EnvelopeCounts {
    static let rate = 44_100

    /// An engine at `rate` with nothing to play: the engine's counting is what is asked of it.
    static func engine() -> Engine {
        var config = EngineConfiguration(sampleRate: rate)
        config.limiterThreshold = 100
        return Engine(
            bank: SampleBank(samples: [[0.5]], sampleRate: rate), instrument: Instrument(keys: []),
            configuration: config)
    }

    @Test func theEngineCountsAsTheReaderDoes() {
        let rate = Self.rate, engine = Self.engine()
        let times = [-32_768, -12_000, -7_200, -1_200, 0, 1_181, 5_000, 8_000, 9_000]
        let sustains = [0, 100, 960, 1_000, 1_440]
        for k in times.indices {
            var generators = defaultGeneratorValues
            func set(_ generator: SoundFontGenerator, _ value: Int) { generators[generator.rawValue] = value }
            set(.delayVolEnv, times[k])
            set(.attackVolEnv, times[(k + 1) % times.count])
            set(.holdVolEnv, times[(k + 2) % times.count])
            set(.decayVolEnv, times[(k + 3) % times.count])
            set(.releaseVolEnv, times[(k + 4) % times.count])
            set(.sustainVolEnv, sustains[k % sustains.count])
            set(.keynumToVolEnvDecay, 10 * k)
            let zone = SoundFontVoiceZone(
                sample: 0, keyRange: 0...127, velocityRange: 1...127, generators: generators, modulators: [],
                instrumentName: "")
            let read = EnvelopeFrames(soundFontEnvelope(zone, key: 72, bankRate: rate), sampleRate: rate)
            let t = soundFontEnvelopeTimecents(zone, key: 72)
            let counted = engine.countedEnvelope(
                SIMD8(t.delay, t.attack, t.hold, t.decay, t.sustainCentibels, t.release, 0, 0))
            #expect(
                counted.delay == read.delay && counted.attack == read.attack && counted.hold == read.hold,
                "case \(k): \(counted) against \(read)")
            #expect(abs(counted.decayRate - read.decayRate) <= 1e-12 * abs(read.decayRate), "case \(k)")
            #expect(abs(counted.releaseRate - read.releaseRate) <= 1e-12 * abs(read.releaseRate), "case \(k)")
            #expect(abs(counted.sustain - read.sustain) < 1e-6 && counted.decay == read.decay, "case \(k)")
            #expect(read.decay % 64 == 0, "case \(k): the decay ends on a block")
        }
    }

    @Test func theEngineCountsTheModulationEnvelopeAsTheReaderDoes() {
        let rate = Self.rate, engine = Self.engine()
        let times = [-32_768, -12_000, -7_200, -1_200, 0, 1_181, 5_000, 8_000, 9_000]
        let sustains = [0, 100, 960, 1_000, 1_440]
        for k in times.indices {
            var generators = defaultGeneratorValues
            func set(_ generator: SoundFontGenerator, _ value: Int) { generators[generator.rawValue] = value }
            set(.delayModEnv, times[k])
            set(.attackModEnv, times[(k + 1) % times.count])
            set(.holdModEnv, times[(k + 2) % times.count])
            set(.decayModEnv, times[(k + 3) % times.count])
            set(.releaseModEnv, times[(k + 4) % times.count])
            set(.sustainModEnv, sustains[k % sustains.count])
            set(.keynumToModEnvHold, -7 * k)
            set(.keynumToModEnvDecay, 10 * k)
            let zone = SoundFontVoiceZone(
                sample: 0, keyRange: 0...127, velocityRange: 1...127, generators: generators, modulators: [],
                instrumentName: "")
            let read = ModulationTicks(soundFontModulation(zone, key: 72), sampleRate: rate)
            let t = soundFontModulationTimecents(zone, key: 72)
            let counted = engine.countedModulation(
                ModulationTicks(), SIMD8(t.delay, t.attack, t.hold, t.decay, t.sustainCentibels, t.release, 0, 0))
            #expect(
                counted.delay == read.delay && counted.attack == read.attack && counted.hold == read.hold
                    && counted.decay == read.decay && counted.release == read.release,
                "case \(k): \(counted) against \(read)")
            #expect(
                counted.attackStep == read.attackStep && counted.decayStep == read.decayStep
                    && counted.releaseStep == read.releaseStep && counted.sustain == read.sustain, "case \(k)")
        }
    }
}
