import BellkeysModel
import Glibc

// A SoundFont zone's envelopes for a region: the volume envelope and the modulation envelope with
// the LFOs, counted as FluidSynth counts them, and their generators' timecents where note-on
// modulators move their times.

/// The volume envelope of `zone` for a note of `key` set on `region`, and its modulation when
/// `modulated`; each with its generators' timecents when note-on modulators move its times.
func setSoundFontEnvelopes(
    _ region: inout Region, _ zone: SoundFontVoiceZone, key: Int, modulated: Bool, bankRate: Int
) {
    let destinations = region.noteModulators?.modulators.map(\.destination) ?? []
    region.envelope = soundFontEnvelope(zone, key: key, bankRate: bankRate)
    if destinations.contains(where: \.isEnvelopeTime) {
        region.envelope?.timecents = soundFontEnvelopeTimecents(zone, key: key)
    }
    guard modulated else { return }
    region.modulation = soundFontModulation(zone, key: key)
    if destinations.contains(where: \.isModulationEnvelopeTime) {
        region.modulation?.envelope.timecents = soundFontModulationTimecents(zone, key: key)
    }
}

/// The volume envelope of `zone` for a note of `key`, in a bank at `bankRate` Hz. 96 dB over a
/// decay or release time in FluidSynth, 90 dB in the engine's envelope, so times are scaled to
/// keep the slope; sustain is 0.96 dB per 10 cB. FluidSynth moves its envelope once per 64
/// frames, so each stage lasts whole blocks: delay rounded down, attack and release rounded
/// down plus one, hold and decay to the nearest (the specification's 1 ms default delay is
/// none, its 1 ms attack one block).
func soundFontEnvelope(_ zone: SoundFontVoiceZone, key: Int, bankRate: Int) -> Envelope {
    let rate = Double(bankRate)
    func blocks(_ seconds: Double, _ rounding: FloatingPointRoundingRule, plusOne: Bool = false) -> Double {
        let count = (seconds * rate / 64).rounded(rounding) + (plusOne ? 1 : 0)
        return count * 64 / rate
    }
    let t = soundFontEnvelopeTimecents(zone, key: key)
    let sustain = max(0, min(1000, t.sustainCentibels))
    let slope = Envelope.fallDecibels / 96
    var envelope = Envelope(
        delay: blocks(seconds(timecents: Int(t.delay), in: -12_000...5_000), .down),
        attack: blocks(seconds(timecents: Int(t.attack), in: -12_000...8_000), .down, plusOne: true),
        hold: blocks(seconds(timecents: Int(t.hold), in: -12_000...5_000, noneIsZero: true), .toNearestOrAwayFromZero),
        decay: blocks(seconds(timecents: Int(t.decay), in: -12_000...8_000), .toNearestOrAwayFromZero) * slope,
        sustain: pow(10, -0.096 * sustain / 20),
        release: blocks(seconds(timecents: Int(t.release), in: -7_200...8_000), .down, plusOne: true) * slope)
    // FluidSynth reads nothing of a voice in its delay: the sample starts as the attack does.
    envelope.readsInDelay = false
    envelope.decaysInBlocks = true
    return envelope
}

/// The volume envelope's generators of `zone` for a note of `key` (hold and decay moved by the
/// key from 60), before FluidSynth clips and counts them: what `soundFontEnvelope` counts, and
/// what the engine counts again with what the note-on modulators add.
func soundFontEnvelopeTimecents(_ zone: SoundFontVoiceZone, key: Int) -> EnvelopeTimecents {
    envelopeGenerators(
        zone, key: key, [.delayVolEnv, .attackVolEnv, .holdVolEnv, .decayVolEnv, .sustainVolEnv, .releaseVolEnv],
        keyToHold: .keynumToVolEnvHold, keyToDecay: .keynumToVolEnvDecay)
}

/// The modulation envelope's generators of `zone` for a note of `key` (hold and decay moved by
/// the key from 60), before FluidSynth clips and counts them, its sustain generator (tenths of a
/// percent) in `sustainCentibels`: what `soundFontModulation` counts, and what the engine
/// counts again with what the note-on modulators add.
func soundFontModulationTimecents(_ zone: SoundFontVoiceZone, key: Int) -> EnvelopeTimecents {
    envelopeGenerators(
        zone, key: key, [.delayModEnv, .attackModEnv, .holdModEnv, .decayModEnv, .sustainModEnv, .releaseModEnv],
        keyToHold: .keynumToModEnvHold, keyToDecay: .keynumToModEnvDecay)
}

/// The six generators `stages` names (delay, attack, hold, decay, sustain, release) of `zone`,
/// hold and decay moved by `keyToHold` and `keyToDecay` × (60 − `key`).
private func envelopeGenerators(
    _ zone: SoundFontVoiceZone, key: Int, _ stages: [SoundFontGenerator], keyToHold: SoundFontGenerator,
    keyToDecay: SoundFontGenerator
) -> EnvelopeTimecents {
    EnvelopeTimecents(
        delay: Double(zone[stages[0]]), attack: Double(zone[stages[1]]),
        hold: Double(zone[stages[2]] + zone[keyToHold] * (60 - key)),
        decay: Double(zone[stages[3]] + zone[keyToDecay] * (60 - key)),
        sustainCentibels: Double(zone[stages[4]]), release: Double(zone[stages[5]]))
}

/// The modulation envelope and the LFOs of `zone` for a note of `key` and where they go
/// (FluidSynth's generators 5 to 7, 10, 11, 13 and 21 to 32): times in seconds as FluidSynth
/// clips them (the engine counts them in ticks as FluidSynth does), hold and decay moved by the
/// key from 60, the sustain level 1 − 0.001 × its generator with FluidSynth's single-precision
/// 0.001.
func soundFontModulation(_ zone: SoundFontVoiceZone, key: Int) -> VoiceModulation {
    let t = soundFontModulationTimecents(zone, key: key)
    let envelope = ModulationEnvelope(
        delay: seconds(timecents: Int(t.delay), in: -12_000...5_000),
        attack: seconds(timecents: Int(t.attack), in: -12_000...8_000),
        hold: seconds(timecents: Int(t.hold), in: -12_000...5_000, noneIsZero: true),
        decay: seconds(timecents: Int(t.decay), in: -12_000...8_000),
        sustain: max(0, min(1, 1 - Double(Float(0.001)) * t.sustainCentibels)),
        release: seconds(timecents: Int(t.release), in: -12_000...8_000))
    // An LFO's frequency as FluidSynth converts it (`fluid_ct2hz_real`: cents clipped to
    // -16,000...4,500, a positive value cut down to a whole cent), its delay as
    // `fluid_voice_update_param` does: clipped to -12,000...5,000 before `fluid_tc2sec_delay`,
    // so -32,768 is not "none" there but 1 ms (the LFO starts a block later than with none).
    func lfo(delay: SoundFontGenerator, frequency: SoundFontGenerator) -> ModulationLFO {
        let cents = Double(max(-16_000, min(4_500, zone[frequency])))
        let hertz = 8.175_798_915_643_707 * exp2((cents >= 0 ? cents.rounded(.towardZero) : cents) / 1200)
        let wait = seconds(timecents: zone[delay], in: -12_000...5_000)
        return ModulationLFO(delay: wait, frequency: hertz)
    }
    var modulation = VoiceModulation(
        envelope: envelope, envelopeToPitchCents: Double(zone[.modEnvToPitch]),
        envelopeToCutoffCents: Double(zone[.modEnvToFilterFc]),
        modulationLFO: lfo(delay: .delayModLFO, frequency: .freqModLFO),
        modulationLFOToPitchCents: Double(zone[.modLfoToPitch]),
        modulationLFOToCutoffCents: Double(zone[.modLfoToFilterFc]),
        modulationLFOToVolumeDecibels: Double(zone[.modLfoToVolume]) / 10,
        vibratoLFO: lfo(delay: .delayVibLFO, frequency: .freqVibLFO),
        vibratoLFOToPitchCents: Double(zone[.vibLfoToPitch]))
    modulation.pitchInWholeCents = true
    return modulation
}
