import BellkeysModel
import Glibc

/// One (preset zone, instrument zone) pair of a preset: a sample, the keys and velocities both
/// zones answer, and the generators a voice of it gets. Thread: control.
public struct SoundFontVoiceZone: Sendable {
    /// Index of the sample header.
    public var sample: Int
    public var keyRange: ClosedRange<Int>
    public var velocityRange: ClosedRange<Int>
    /// Every generator's value by number: the instrument zone's (else its global zone's, else
    /// the default), plus the preset zone's (else its global zone's), as SoundFont 2.04
    /// section 9.4 adds them.
    public var generators: [Int]
    /// The modulators a voice gets: the defaults, replaced by the instrument's identical ones,
    /// with the preset's added (section 9.5).
    public var modulators: [SoundFontModulator]
    public var instrumentName: String

    public subscript(_ generator: SoundFontGenerator) -> Int { generators[generator.rawValue] }
}

/// The default modulators (SoundFont 2.04 section 8.4) as FluidSynth 2.3 has them.
public let defaultSoundFontModulators: [SoundFontModulator] = [
    // Velocity to attenuation: concave, unipolar, negative, 960 cB.
    SoundFontModulator(source: 0x0502, destination: 48, amount: 960, amountSource: 0, transform: 0),
    // Velocity to filter cutoff, its amount switched by velocity (FluidSynth makes it do nothing;
    // a font's own velocity to cutoff with no amount source is another modulator, and played).
    SoundFontModulator(source: 0x0102, destination: 8, amount: -2400, amountSource: 0x0C02, transform: 0),
    // Channel pressure and CC1 to vibrato depth.
    SoundFontModulator(source: 0x000D, destination: 6, amount: 50, amountSource: 0, transform: 0),
    SoundFontModulator(source: 0x0081, destination: 6, amount: 50, amountSource: 0, transform: 0),
    // CC7 and CC11 to attenuation, CC10 to pan, CC91 and CC93 to the sends.
    SoundFontModulator(source: 0x0587, destination: 48, amount: 960, amountSource: 0, transform: 0),
    SoundFontModulator(source: 0x028A, destination: 17, amount: 500, amountSource: 0, transform: 0),
    SoundFontModulator(source: 0x058B, destination: 48, amount: 960, amountSource: 0, transform: 0),
    SoundFontModulator(source: 0x00DB, destination: 16, amount: 200, amountSource: 0, transform: 0),
    SoundFontModulator(source: 0x00DD, destination: 15, amount: 200, amountSource: 0, transform: 0),
    // Pitch wheel, scaled by its sensitivity, to fine tune.
    SoundFontModulator(source: 0x020E, destination: 52, amount: 12_700, amountSource: 0x0010, transform: 0),
]

/// FluidSynth's defaults from channel pressure and CC1 to the vibrato's depth, which bellkeys
/// plays as any other modulator (the others are the engine's own work).
let defaultVibratoModulators = Array(defaultSoundFontModulators[2...3])

/// The most pairs of zones a preset may make, and weigh (FluidR3's presets make at most a few
/// hundred): a damaged file could pair tens of thousands of preset zones with as many
/// instrument zones.
public let maximumVoiceZones = 65_536
let maximumZonePairs = 1 << 22

/// Every generator's default value, by number (61 numbers; the unused ones 0).
let defaultGeneratorValues = SoundFontGenerator.allCases.reduce(into: [Int](repeating: 0, count: 61)) {
    $0[$1.rawValue] = $1.defaultValue
}

/// The voice zones of `preset`: every pair of a preset zone and one of its instrument's zones
/// whose key and velocity ranges meet, in file order, at most `maximumVoiceZones` of them
/// (more: nil). Zones inherit their global zone's generators (ranges included, as the
/// specification and FluidSynth from 2.3.3 have it).
public func voiceZones(of preset: SoundFontPreset, in font: SoundFont) -> [SoundFontVoiceZone]? {
    var result: [SoundFontVoiceZone] = []
    var pairs = 0
    let full = 0...127
    for presetZone in preset.zones {
        guard let instrumentIndex = presetZone.target, instrumentIndex < font.instruments.count else { continue }
        let instrument = font.instruments[instrumentIndex]
        let presetKeys = presetZone.range(.keyRange) ?? preset.global?.range(.keyRange) ?? full
        let presetVelocities = presetZone.range(.velRange) ?? preset.global?.range(.velRange) ?? full
        for zone in instrument.zones {
            guard let sample = zone.target, sample < font.samples.count else { continue }
            pairs += 1
            if result.count == maximumVoiceZones || pairs > maximumZonePairs { return nil }
            let keys = zone.range(.keyRange) ?? instrument.global?.range(.keyRange) ?? full
            let velocities = zone.range(.velRange) ?? instrument.global?.range(.velRange) ?? full
            let keyLow = max(keys.lowerBound, presetKeys.lowerBound)
            let keyHigh = min(keys.upperBound, presetKeys.upperBound)
            let velocityLow = max(velocities.lowerBound, presetVelocities.lowerBound)
            let velocityHigh = min(velocities.upperBound, presetVelocities.upperBound)
            guard keyLow <= keyHigh, velocityLow <= velocityHigh, keyLow <= 127, velocityLow <= 127, velocityHigh >= 1
            else { continue }

            // The instrument's value (its zone's, else its global zone's, else the default),
            // plus the preset's (likewise, but for ranges and instrument-only generators).
            var generators = defaultGeneratorValues
            for (id, value) in instrument.global?.generators ?? [:] where zone.generators[id] == nil {
                if SoundFontGenerator(rawValue: id) != nil { generators[id] = Int(value) }
            }
            for (id, value) in zone.generators where SoundFontGenerator(rawValue: id) != nil {
                generators[id] = Int(value)
            }
            func add(_ id: Int, _ value: Int16) {
                guard let generator = SoundFontGenerator(rawValue: id), !generator.isInstrumentOnly,
                    generator != .keyRange, generator != .velRange
                else { return }
                generators[id] += Int(value)
            }
            for (id, value) in preset.global?.generators ?? [:] where presetZone.generators[id] == nil {
                add(id, value)
            }
            for (id, value) in presetZone.generators { add(id, value) }
            var modulators = defaultSoundFontModulators
            for modulator in (instrument.global?.modulators ?? []).filter({ m in
                !zone.modulators.contains { $0.isSame(as: m) }
            }) + zone.modulators {
                if let i = modulators.firstIndex(where: { $0.isSame(as: modulator) }) {
                    modulators[i].amount = modulator.amount
                } else {
                    modulators.append(modulator)
                }
            }
            for modulator in (preset.global?.modulators ?? []).filter({ m in
                !presetZone.modulators.contains { $0.isSame(as: m) }
            }) + presetZone.modulators where modulator.amount != 0 {
                if let i = modulators.firstIndex(where: { $0.isSame(as: modulator) }) {
                    modulators[i].amount = Int16(clamping: Int(modulators[i].amount) + Int(modulator.amount))
                } else {
                    modulators.append(modulator)
                }
            }
            result.append(
                SoundFontVoiceZone(
                    sample: sample, keyRange: keyLow...min(127, keyHigh),
                    velocityRange: max(1, velocityLow)...min(127, velocityHigh), generators: generators,
                    modulators: modulators, instrumentName: instrument.name))
        }
    }
    return result
}

/// The value 0...1 a modulator source gives for a controller value 0...127 (SoundFont 2.04
/// section 8.2.1; FluidSynth divides by 128). Types: 0 linear, 1 concave, 2 convex, 3 switch.
public func modulatorSourceValue(_ source: UInt16, _ value: Int) -> Double {
    let type = Int(source >> 10), bipolar = source & 0x200 != 0, negative = source & 0x100 != 0
    var x = Double(value) / 128
    if negative { x = 1 - x }
    func shape(_ x: Double) -> Double {
        switch type {
        case 1: x >= 1 ? 1 : max(0, -(5.0 / 12) * log10(1 - x))
        case 2: x <= 0 ? 0 : min(1, 1 + (5.0 / 12) * log10(x))
        case 3: x >= 0.5 ? 1 : 0
        default: x
        }
    }
    guard bipolar else { return shape(x) }
    if type == 3 { return x >= 0.5 ? 1 : -1 }
    if type == 0 { return 2 * x - 1 }
    return x >= 0.5 ? shape(2 * (x - 0.5)) : -shape(2 * (0.5 - x))
}

/// The gain at each velocity 0...127 that a voice zone's velocity-to-attenuation modulators
/// give (by default (v/128)², FluidSynth's concave curve); velocity 0 is silent.
public func soundFontVelocityGains(_ zone: SoundFontVoiceZone) -> [Float] {
    let modulators = zone.modulators.filter(isVelocityToAttenuation)
    // (Most zones keep the default alone: its gains are worked out once.)
    if zone[.velocity] <= 0, modulators == [defaultSoundFontModulators[0]] { return defaultVelocityGains }
    return velocityGains(modulators, fixedVelocity: zone[.velocity])
}

/// The gains of the default velocity-to-attenuation modulator alone.
private let defaultVelocityGains = velocityGains([defaultSoundFontModulators[0]], fixedVelocity: 0)

/// `soundFontVelocityGains` for velocity-to-attenuation `modulators` (a fixed velocity, if above 0).
private func velocityGains(_ modulators: [SoundFontModulator], fixedVelocity: Int) -> [Float] {
    (0..<128).map { v in
        if v == 0 { return 0 }
        let velocity = fixedVelocity > 0 ? min(127, fixedVelocity) : v
        var centibels = 0.0
        for m in modulators {
            var value = Double(m.amount) * modulatorSourceValue(m.source, velocity)
            if m.amountSource & 0x7F == 2 { value *= modulatorSourceValue(m.amountSource, velocity) }
            centibels += value
        }
        return Float(pow(10, -max(0, centibels) / 200))
    }
}

/// Seconds for a time in timecents, clipped first to `range` (FluidSynth's limits), so that
/// the specification's "none" (-32768) is the shortest time there; a hold of -32768 or less
/// (`noneIsZero`) is none at all, as FluidSynth has it.
func seconds(timecents: Int, in range: ClosedRange<Int>, noneIsZero: Bool = false) -> Double {
    if noneIsZero, timecents <= -32_768 { return 0 }
    return exp2(Double(max(range.lowerBound, min(range.upperBound, timecents))) / 1200)
}

/// The regions that play a voice zone, for a sample stored in the bank at `sampleIndex`
/// (`frameCount` frames, its first frame the sample header's word `firstWord`, at
/// `sampleRate` Hz) in a bank at `bankRate` Hz. One region for each run of keys that FluidSynth
/// tunes alike (usually all), or one per key when the envelope's hold or decay follows the key. Loop points and offsets are made relative to the stored
/// sample and kept inside it. Thread: control.
public func soundFontRegions(
    _ zone: SoundFontVoiceZone, header: SoundFontSample, sampleIndex: Int, firstWord: Int, frameCount: Int,
    sampleRate: Int, bankRate: Int
) -> [Region] {
    var region = Region(sampleIndex: sampleIndex)
    region.keyRange = zone.keyRange
    region.velocityRange = zone.velocityRange

    // Pitch: the root key, the scale tuning, coarse and fine tune, the sample's own
    // correction, and its rate against the bank's.
    let root = zone[.overridingRootKey] >= 0 ? zone[.overridingRootKey] : header.originalPitch
    region.pitchKeycenter = root <= 127 ? root : 60
    let scale = Double(zone[.scaleTuning])
    region.pitchKeytrackCents = scale
    let coarseAndFine = Double(100 * zone[.coarseTune] + zone[.fineTune])
    let correction = scale * Double(header.pitchCorrection) / 100
    let rateCents = 1200 * log2(Double(max(1, sampleRate)) / Double(bankRate))
    region.tuneCents = coarseAndFine + correction + rateCents
    if zone[.keynum] >= 0 {
        region.tuneCents += scale * Double(min(127, zone[.keynum]) - region.pitchKeycenter)
        region.pitchKeytrackCents = 0
    }

    // Level: FluidSynth reads initial attenuation at 0.4 of its value (as EMU's hardware did).
    // FluidSynth clips the total (with velocity, CC7 and CC11) to 0-1440 cB: a negative value
    // (a boost) is kept here up to the 45.6 cB those take at their defaults (velocity 127, CC7
    // 100, CC11 127), the most FluidSynth can boost.
    let attenuation = max(-45.6, min(1440, 0.4 * Double(zone[.initialAttenuation])))
    var gain = pow(10, -attenuation / 200)
    region.pan = max(-1, min(1, Double(zone[.pan]) / 500))
    // The reverb send, in tenths of a percent: FluidSynth's send is clip((generator + 200 ×
    // CC91 / 128) / 1000, 0, 1), so in the units of the CC91 part (1 at 128) the zone adds
    // generator / 200, at most 5.
    region.reverbSend = Float(max(0, min(1000, zone[.reverbEffectsSend]))) / 200
    region.velocityGains = soundFontVelocityGains(zone)
    region.noteModulators = soundFontNoteModulators(zone, attenuation: attenuation)

    gain *= soundFontFilter(zone, &region, bankRate: bankRate)
    region.gain = Float(gain)

    // Samples: the offsets (fine + 32768 × coarse), inside the sample; loop points likewise.
    let start = zone[.startAddrsOffset] + 32_768 * zone[.startAddrsCoarseOffset]
    region.offset = max(0, min(frameCount - 1, start))
    let loopStart =
        header.loopStart - firstWord + zone[.startloopAddrsOffset] + 32_768 * zone[.startloopAddrsCoarseOffset]
    let loopEnd = header.loopEnd - firstWord + zone[.endloopAddrsOffset] + 32_768 * zone[.endloopAddrsCoarseOffset]
    let low = max(0, min(frameCount, min(loopStart, loopEnd))), high = max(0, min(frameCount, max(loopStart, loopEnd)))
    switch zone[.sampleModes] & 3 {
    case 1: region.loopMode = .continuous
    case 3: region.loopMode = .sustain
    default: region.loopMode = .noLoop
    }
    // The loop's end word is the first after it; a loop under 2 frames does not loop.
    if high - low < 2 { region.loopMode = .noLoop }
    region.loopStart = low
    region.loopEnd = max(low, high - 1)

    region.group = max(0, zone[.exclusiveClass])
    region.offBy = region.group
    // FluidSynth releases a cut-off voice over 0.89 s, 96 dB; a linear fade of 0.11 s is as
    // loud over its first half.
    if region.group != 0 { region.offFadeSeconds = 0.11 }

    let pitch = FluidSynthPitch(
        zone: zone, scale: scale, rootPitch: Double(region.pitchKeycenter * 100 - header.pitchCorrection),
        keycenter: region.pitchKeycenter, correction: correction, coarseAndFine: coarseAndFine)
    // One region for each run of keys that share those cents and (when hold or decay follows
    // the key) an envelope.
    let modulated =
        zone[.modEnvToPitch] != 0 || zone[.modEnvToFilterFc] != 0 || zone[.modLfoToPitch] != 0
        || zone[.modLfoToFilterFc] != 0 || zone[.modLfoToVolume] != 0 || zone[.vibLfoToPitch] != 0
        || region.noteModulators?.modulators.contains { $0.destination.isDepth } ?? false
    // (The modulation envelope's hold and decay by key split the keys only where it moves
    // something: every zone has the default vibrato's modulators, so every zone is modulated.)
    let envelopeMoves =
        zone[.modEnvToPitch] != 0 || zone[.modEnvToFilterFc] != 0
        || region.noteModulators?.modulators.contains {
            $0.destination == .envelopeToPitchCents || $0.destination == .envelopeToCutoffCents
        } ?? false
    let keyed =
        zone[.keynumToVolEnvHold] != 0 || zone[.keynumToVolEnvDecay] != 0
        || envelopeMoves && (zone[.keynumToModEnvHold] != 0 || zone[.keynumToModEnvDecay] != 0)
    var regions: [Region] = []
    for key in region.keyRange {
        let cents = pitch.centsCut(key)
        if !keyed, var last = regions.last, last.tuneCents == region.tuneCents + cents {
            last.keyRange = last.keyRange.lowerBound...key
            regions[regions.count - 1] = last
            continue
        }
        var piece = region
        piece.keyRange = key...key
        piece.tuneCents += cents
        piece.pitchCentsFraction = pitch.fraction(key)
        setSoundFontEnvelopes(&piece, zone, key: keyed ? key : 60, modulated: modulated, bankRate: bankRate)
        regions.append(piece)
    }
    return regions
}

/// A zone's pitch as FluidSynth reckons it, in whole cents: its sum of root, correction, scale
/// tuning and tune, in floating point, cut down to a whole cent (6000 may come out as
/// 5999.999... and play a cent flat). Thread: any.
private struct FluidSynthPitch {
    let zone: SoundFontVoiceZone
    let scale: Double
    /// 100 × the root key − the sample's correction.
    let rootPitch: Double
    let keycenter: Int
    let correction: Double
    let coarseAndFine: Double

    /// The cents FluidSynth plays at `key`, less the exact ones.
    func centsCut(_ key: Int) -> Double {
        guard zone[.keynum] < 0 else { return 0 }
        let pitch = scale * (Double(key) - rootPitch / 100) + rootPitch + coarseAndFine
        let whole = { (c: Double) in c >= 0 ? c.rounded(.towardZero) : c }
        let exact = scale * Double(key - keycenter) + correction + coarseAndFine
        let difference = whole(pitch) - whole(rootPitch) - exact
        return abs(difference) < 1e-6 ? 0 : difference
    }

    /// The fraction of a cent FluidSynth cuts from `key`'s pitch, which cuts what modulators add
    /// with it: 0 where the sum is a whole number (a scale tuning of 100), near 1 where the
    /// floating-point sum falls just short of one (5999.999...), which can differ key by key. A
    /// zone with a fixed key plays its exact pitch (`centsCut`), and 0 here with it.
    func fraction(_ key: Int) -> Double {
        guard zone[.keynum] < 0 else { return 0 }
        let pitch = scale * (Double(key) - rootPitch / 100) + rootPitch + coarseAndFine
        return pitch >= 0 ? pitch - pitch.rounded(.towardZero) : 0
    }
}

/// The low-pass of `zone` set on `region`; returns the gain the region takes for it. Off at its
/// defaults (FluidSynth's is at 19.9 kHz, capped at 0.45 of the rate, with 1.5 dB of gain at
/// every cutoff). A modulation envelope, LFO or note-on modulator that moves the cutoff or Q
/// turns it on, its cutoff the generator's unclipped: the engine keeps the sum within FluidSynth's
/// range and below 0.45 of the rate, as FluidSynth keeps it.
private func soundFontFilter(_ zone: SoundFontVoiceZone, _ region: inout Region, bankRate: Int) -> Double {
    let moved =
        zone[.modEnvToFilterFc] != 0 || zone[.modLfoToFilterFc] != 0
        || region.noteModulators?.modulators.contains {
            [.cutoffCents, .resonanceDecibels, .envelopeToCutoffCents, .modulationLFOToCutoffCents].contains(
                $0.destination)
        }
            ?? false
    // FluidSynth keeps the cutoff within 1,500 to 13,500 cents after it adds what moves it, so a
    // moved cutoff starts from the generator as it is (the engine keeps the sum in that range).
    let cutoffCents = moved ? zone[.initialFilterFc] : max(1500, min(13_500, zone[.initialFilterFc]))
    let q = max(0, min(960, zone[.initialFilterQ]))
    guard cutoffCents < 13_500 || q > 0 || moved else { return 1 }
    region.filter = .lowPass2
    region.cutoff = 8.175_798_915_643_707 * exp2(Double(cutoffCents) / 1200)
    if !moved { region.cutoff = min(region.cutoff, 0.45 * Double(bankRate)) }
    region.resonance = Double(q) / 10
    // FluidSynth turns a resonant filter's passband down by half its peak in dB.
    return pow(10, -Double(q) / 400)
}
