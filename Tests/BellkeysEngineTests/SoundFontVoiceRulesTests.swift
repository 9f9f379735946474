import BellkeysModel
import Glibc
import Testing

@testable import BellkeysEngine

/// Two rules of a SoundFont voice, as FluidSynth 2.3 plays one: nothing is read in the volume
/// envelope's delay (the sample starts as the attack does), and a modulated pitch moves in
/// whole cents. Found by comparing every melodic preset of Debian's fonts with FluidSynth:
/// FluidR3's Drawbar Organ (a delay of 6 blocks at soft velocities) read 384 frames ahead,
/// and layered presets whose modulation moves the pitch a few cents (TimGM6mb's Church Organ
/// and Synth Bass 2, FluidR3's Chiffer Lead) beat against themselves at another rate.
@Suite struct SoundFontVoiceRules {
    /// A looped 1 kHz sine at 48 kHz under an envelope of 10 ms delay and 5 ms attack.
    func delayed(readsInDelay: Bool, delay: Double = 0.01) -> Region {
        var region = filteredSine()
        region.filter = nil
        region.envelope = Envelope(delay: delay, attack: 0.005, release: 0.05)
        region.envelope?.readsInDelay = readsInDelay
        return region
    }

    func rendered(_ region: Region, at frame: Int64, modulation: VoiceModulation? = nil) -> [Float] {
        var region = region
        region.modulation = modulation
        let e = sineEngine(region)
        e.enqueue(.noteOn(frame: frame, note: 67, velocity: 100))
        e.enqueue(.noteOff(frame: 4_000, note: 67))
        return render(e, 9_600)
    }

    @Test func nothingIsReadInTheDelay() {
        // 10 ms at 48 kHz: 480 frames. Held in the delay, the voice sounds as one with no delay
        // struck 480 frames later, bit for bit; read through it, it does not.
        let held = rendered(delayed(readsInDelay: false), at: 0)
        let later = rendered(delayed(readsInDelay: false, delay: 0), at: 480)
        let read = rendered(delayed(readsInDelay: true), at: 0)
        let (same, differs) = (held == later, held != read)
        #expect(same && differs)
        #expect(held[..<480].allSatisfy { $0 == 0 } && held[480...].contains { $0 != 0 })
        // A modulated voice's ticks still run from the note-on: tick by tick its increment is a
        // voice's with no delay struck at the same frame, through the delay and after it.
        let vibrato = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5), vibratoLFOToPitchCents: 50)
        var engines: [Engine] = []
        for delay in [0.01, 0] {
            var region = delayed(readsInDelay: false, delay: delay)
            region.modulation = vibrato
            let e = sineEngine(region)
            e.enqueue(.noteOn(frame: 0, note: 67, velocity: 100))
            engines.append(e)
        }
        for k in 0..<30 {
            let increments = engines.map { e in
                _ = render(e, k == 0 ? 1 : 64)
                return e.pool.pitchedVoices[Int(e.pool.active[0])].increment
            }
            #expect(increments[0] == increments[1], "tick \(k)")
        }
    }

    @Test func aNoteOffInTheDelayEndsTheVoiceSilently() {
        // As FluidSynth's: released from nothing, it ends, and nothing was read.
        let e = sineEngine(delayed(readsInDelay: false))
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: 100))
        e.enqueue(.noteOff(frame: 100, note: 67))
        let out = render(e, 4_800)
        #expect(out.allSatisfy { $0 == 0 } && e.activeCount == 0)
    }

    @Test func aModulatedPitchMovesInWholeCents() {
        // The vibrato LFO at 5 Hz, 7.5 cents deep, on a region whose pitch leaves 0.4 of a cent
        // above its whole cent: each tick's increment is the sample's step × 2^(⌊0.4 + LFO ×
        // 7.5⌋ / 1200), where the exact voice takes 2^(LFO × 7.5 / 1200).
        for whole in [false, true] {
            var region = delayed(readsInDelay: false, delay: 0)
            region.pitchKeycenter = 67
            region.pitchCentsFraction = 0.4
            var modulation = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5), vibratoLFOToPitchCents: 7.5)
            modulation.pitchInWholeCents = whole
            region.modulation = modulation
            let e = sineEngine(region)
            e.enqueue(.noteOn(frame: 0, note: 67, velocity: 100))
            var lfo = 0.0, step = 4 * 64 * 5.0 / 48_000
            var seen = Set<UInt64>()
            for k in 0..<40 {
                _ = render(e, k == 0 ? 1 : 64)
                stepLFO(&lfo, &step, age: 64 * k, delay: 0)
                var cents = lfo * 7.5
                if whole { cents = (0.4 + cents).rounded(.down) }
                let expected = UInt64(4_294_967_296 * exp2Fast(cents / 1200) + 0.5)
                let slot = Int(e.pool.active[0])
                #expect(e.pool.pitchedVoices[slot].increment == expected, "whole \(whole), tick \(k)")
                seen.insert(e.pool.pitchedVoices[slot].increment)
            }
            // Whole cents: −8 ... 7 cents, 16 steps at most; exact: a step a tick.
            #expect(whole ? seen.count <= 16 : seen.count > 30)
        }
    }

    @Test func aNoteOnPitchModulatorIsCutWithTheRegionsFraction() {
        // 3.3 cents × velocity/128 on a region 0.4 of a cent above its whole cent: the voice
        // plays ⌊0.4 + 3.3 v/128⌋ cents up (velocity 100: 2.978 → 2), and its vibrato later is
        // cut with what is left (0.978).
        var region = delayed(readsInDelay: false, delay: 0)
        region.pitchKeycenter = 67
        region.pitchCentsFraction = 0.4
        var modulators = NoteModulators(modulators: [
            Modulator(source: .velocity, curve: Modulator.linear, amount: 3.3, destination: .pitchCents)
        ])
        modulators.pitchInWholeCents = true
        region.noteModulators = modulators
        for velocity in [30, 100, 127] {
            let e = sineEngine(region)
            e.enqueue(.noteOn(frame: 0, note: 67, velocity: velocity))
            _ = render(e, 1)
            let cents = (0.4 + 3.3 * Double(velocity) / 128).rounded(.down)
            let expected = UInt64(Double(UInt64(1) << 32) * exp2Fast(cents / 1200) + 0.5)
            #expect(e.pool.pitchedVoices[Int(e.pool.active[0])].baseIncrement == expected, "velocity \(velocity)")
        }
        var modulated = region
        var vibrato = VoiceModulation(vibratoLFO: ModulationLFO(frequency: 5), vibratoLFOToPitchCents: 7.5)
        vibrato.pitchInWholeCents = true
        modulated.modulation = vibrato
        let e = sineEngine(modulated)
        e.enqueue(.noteOn(frame: 0, note: 67, velocity: 100))
        _ = render(e, 1)
        let left = e.pool.modulatedVoices[Int(e.pool.active[0])].pitchFraction
        #expect(abs(left - (0.4 + 3.3 * 100 / 128 - 2)) < 1e-12)
    }

    /// A constant sample at full level for 64 frames (no attack, a 64-frame hold), then a decay
    /// that falls to the sustain level (−6 dB) in `frames` frames.
    func fastDecay(inBlocks: Bool, frames: Double = 10) -> [Float] {
        var region = Region(sampleIndex: 0)
        region.loopMode = .continuous
        region.loopEnd = 47_999
        // (90 dB in the decay's time: 6.02 dB in `frames`.)
        let decay = frames * 90 / (20 * log10(2.0)) / 48_000
        region.envelope = Envelope(hold: 64.0 / 48_000, decay: decay, sustain: 0.5, release: 0.05)
        region.envelope?.decaysInBlocks = inBlocks
        let bank = SampleBank(samples: [constant(0.5, 48_000)], sampleRate: 48_000)
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [])
        instrument.regions = [region]
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        return render(e, 400)
    }

    @Test func aDecayShorterThanABlockIsSpreadOverTheBlock() {
        // FluidSynth moves its volume envelope once a block and ramps the amplitude across it:
        // TimGM6mb's Bottle Blow decays to −2.3 dB in a frame, which FluidSynth plays as a ramp
        // over 64 frames. A SoundFont's decay (decaysInBlocks) ends on the block: a straight line
        // from full level at frame 64 (the first of the decay) to the sustain level at frame 128,
        // then the level holds.
        let blocks = fastDecay(inBlocks: true), frames = fastDecay(inBlocks: false)
        let full = blocks[64]
        #expect(full > 0.1 && blocks[0...64].allSatisfy { $0 == full })
        let steps = (64..<128).map { blocks[$0 + 1] - blocks[$0] }
        let step = (blocks[128] - full) / 64
        #expect(steps.allSatisfy { abs($0 - step) < 1e-6 * full }, "\(steps)")
        #expect(blocks[128...].allSatisfy { abs($0 - full / 2) < 1e-6 * full })
        // An SFZ decay ends on the frame the curve reaches the level: 10 frames.
        #expect(frames[64] == full && frames[74...].allSatisfy { abs($0 - full / 2) < 1e-6 * full })
        #expect(frames[70] < blocks[70] - 0.2 * full)
        // A fall of 70 frames lasts two blocks (not the nearest whole number of blocks, one):
        // on the curve at the first block's end, the sustain level at the second's.
        let two = fastDecay(inBlocks: true, frames: 70)
        #expect(abs(two[128] - full * Float(pow(0.5, 64.0 / 70))) < 1e-5 * full)
        #expect(two[191] > full / 2 * (1 + 1e-4) && two[192...].allSatisfy { abs($0 - full / 2) < 1e-6 * full })
    }
}
