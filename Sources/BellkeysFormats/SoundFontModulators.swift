import BellkeysModel
import Glibc

// A SoundFont's modulators as note-on modulators (`NoteModulators`), read as FluidSynth 2.3.1
// reads them (`fluid_mod_get_value`, `fluid_mod_transform_source_value`, `fluid_zone_check_mod`).

/// FluidSynth's concave and convex curves at 128 points (`gen_conv.c`): x(i) = −(5/12) log₁₀(i /
/// 127); convex[i] = 1 − x(i), concave[127 − i] = x(i); 0 at 0 and 1 at 127.
let soundFontConvex: [Double] = (0..<128).map { (i: Int) -> Double in
    if i == 0 || i == 127 { return Double(i / 127) }
    let x: Double = -5.0 / 12 * log10(Double(i) / 127)
    return 1 - x
}
let soundFontConcave: [Double] = (0..<128).map { (i: Int) -> Double in
    if i == 0 || i == 127 { return Double(i / 127) }
    return -5.0 / 12 * log10(Double(127 - i) / 127)
}

/// A 128-point curve at `x` in 0...127, straight between its points (`fluid_concave`).
private func read(_ table: [Double], at x: Double) -> Double {
    if x < 0 { return 0 }
    let i = Int(x)
    if i >= 127 { return table[127] }
    return table[i] + (table[i + 1] - table[i]) * (x - Double(i))
}

/// The value of a modulator source (its type, polarity and direction: the top six bits of the
/// source word) at each input 0..<`count`, as FluidSynth transforms a source over its range
/// (128, or 16,384 for the pitch wheel); nil for a type FluidSynth does not know (it plays that
/// modulator at amount 0).
func soundFontCurve(_ source: UInt16, count: Int = 128) -> [Double]? {
    let type = Int(source >> 10), bipolar = source & 0x200 != 0, negative = source & 0x100 != 0
    guard type <= 3 else { return nil }
    return (0..<count).map { input in
        let x = Double(input) / Double(count)
        switch (type, bipolar) {
        case (0, false): return negative ? 1 - x : x
        case (0, true): return negative ? 1 - 2 * x : -1 + 2 * x
        case (3, false): return (x >= 0.5) != negative ? 1 : 0
        case (3, true): return (x >= 0.5) != negative ? 1 : -1
        default:
            let table = type == 1 ? soundFontConcave : soundFontConvex
            if !bipolar { return read(table, at: 127 * (negative ? 1 - x : x)) }
            let side = x > 0.5 ? read(table, at: 127 * 2 * (x - 0.5)) : -read(table, at: 127 * 2 * (0.5 - x))
            return negative ? -side : side
        }
    }
}

/// What a modulator source word reads, if bellkeys plays it: the note's velocity or key, a
/// controller FluidSynth accepts (not 0, 6, 32, 38, 98 to 101, or 120 and above), the key's or
/// the channel's pressure, the pitch wheel or its range. `none` is no source (general source
/// 0); general sources the specification leaves undefined are unplayed (FluidSynth plays them
/// at 0).
private enum SourceReading: Equatable {
    case none, reads(ModulatorSource), unplayed
}

private func reading(_ source: UInt16) -> SourceReading {
    let index = Int(source & 0x7F)
    if source & 0x80 != 0 {
        let refused = [0, 6, 32, 38, 98, 99, 100, 101].contains(index) || index >= 120
        return refused ? .unplayed : .reads(.controller(index))
    }
    switch index {
    case 0: return .none
    case 2: return .reads(.velocity)
    case 3: return .reads(.key)
    case 10: return .reads(.keyPressure)
    case 13: return .reads(.channelPressure)
    case 14: return .reads(.pitchWheel)
    case 16: return .reads(.pitchWheelRange)
    default: return .unplayed
    }
}

/// The note-on modulators one SoundFont modulator becomes, or nil if bellkeys does not
/// play it this way: a default (the engine's own work, or FluidSynth's inert velocity to
/// cutoff), velocity to attenuation (the region's velocity gains), a source or destination not
/// played at note-on. `fixedVelocity` and `fixedKey` (a zone's `velocity` and `keynum`, ≥ 0)
/// stand for the note's.
func noteModulators(_ m: SoundFontModulator, fixedVelocity: Int = -1, fixedKey: Int = -1) -> [Modulator]? {
    // The defaults are the engine's own work, but for CC1 and channel pressure to the vibrato,
    // which are played as any other modulator.
    let vibrato = defaultVibratoModulators.contains { $0.isSame(as: m) }
    guard m.amount != 0, m.transform == 0, !isVelocityToAttenuation(m),
        vibrato || !defaultSoundFontModulators.contains(where: { $0.isSame(as: m) }),
        case .reads(let source) = reading(m.source), var curve = soundFontCurve(m.source, count: source.valueCount)
    else { return nil }
    let amountReading = reading(m.amountSource)
    var amountSource: ModulatorSource?
    if case .reads(let s) = amountReading { amountSource = s }
    guard amountReading != .unplayed,
        var amountCurve = soundFontCurve(m.amountSource, count: amountSource?.valueCount ?? 128)
    else { return nil }
    if amountSource == nil { amountCurve = [] }
    // A zone that fixes the velocity or the key reads its own.
    func fixed(_ curve: inout [Double], _ s: ModulatorSource?) {
        let input = s == .velocity ? fixedVelocity : (s == .key ? fixedKey : -1)
        if input >= 0, input < curve.count { curve = [Double](repeating: curve[input], count: 128) }
    }
    fixed(&curve, source)
    fixed(&amountCurve, amountSource)
    let amount = Double(m.amount)
    func made(_ scale: Double, _ destination: ModulatorDestination) -> Modulator {
        Modulator(
            source: source, curve: curve, amountSource: amountSource, amountCurve: amountCurve,
            amount: amount * scale, destination: destination)
    }
    switch m.destination {
    case 8: return [made(1, .cutoffCents)]
    case 9: return [made(0.1, .resonanceDecibels)]
    case 48: return [made(-0.1, .levelDecibels)]
    case 51: return [made(100, .pitchCents)]
    case 52: return [made(1, .pitchCents)]
    case 5: return [made(1, .modulationLFOToPitchCents)]
    case 6: return [made(1, .vibratoLFOToPitchCents)]
    case 7: return [made(1, .envelopeToPitchCents)]
    case 10: return [made(1, .modulationLFOToCutoffCents)]
    case 11: return [made(1, .envelopeToCutoffCents)]
    case 13: return [made(0.1, .modulationLFOToVolumeDecibels)]
    case 33: return [made(1, .envelopeDelayCents)]
    case 34: return [made(1, .envelopeAttackCents)]
    case 35: return [made(1, .envelopeHoldCents)]
    case 36: return [made(1, .envelopeDecayCents)]
    case 37: return [made(1, .envelopeSustainCentibels)]
    case 38: return [made(1, .envelopeReleaseCents)]
    case 25: return [made(1, .modulationEnvelopeDelayCents)]
    case 26: return [made(1, .modulationEnvelopeAttackCents)]
    case 27: return [made(1, .modulationEnvelopeHoldCents)]
    case 28: return [made(1, .modulationEnvelopeDecayCents)]
    case 29: return [made(1, .modulationEnvelopeSustainPerMille)]
    case 30: return [made(1, .modulationEnvelopeReleaseCents)]
    case 0: return [made(1, .startOffsetFrames)]
    case 4: return [made(1, .startOffsetCoarseFrames)]
    default: return nil
    }
}

/// The note-on modulators of `zone` (nil: none). FluidSynth clips the attenuation, summed, at 0:
/// they may add no more level than the zone's `attenuation` (centibels) and the 45.6 cB CC7 and
/// CC11 take at their defaults (100, 127) took away, and a softer strike's velocity (the
/// engine adds that). The Q stays within 0 to 96 dB, and the passband falls by half its peak.
func soundFontNoteModulators(_ zone: SoundFontVoiceZone, attenuation: Double) -> NoteModulators? {
    let fixedVelocity = zone[.velocity] > 0 ? min(127, zone[.velocity]) : -1
    let fixedKey = zone[.keynum] >= 0 ? min(127, zone[.keynum]) : -1
    let all = zone.modulators.compactMap { noteModulators($0, fixedVelocity: fixedVelocity, fixedKey: fixedKey) }
        .flatMap { $0 }
    guard !all.isEmpty else { return nil }
    var modulators = NoteModulators(
        modulators: all, levelCeilingDecibels: max(0, attenuation + 45.6) / 10, resonanceRange: 0...96,
        resonanceLevelShare: -0.5)
    modulators.startOffsets = (zone[.startAddrsOffset], zone[.startAddrsCoarseOffset])
    modulators.pitchInWholeCents = true
    return modulators
}

/// The controllers of a FluidSynth channel as it starts or is reset (`fluid_channel_init_ctrl`;
/// the rest are 0): volume 100, balance and pan 64, expression 127 (and its LSB), the sound
/// controllers 70 to 79 at 64.
public let soundFontControllerDefaults: [Int: Int] = {
    var values: [Int: Int] = [7: 100, 8: 64, 10: 64, 11: 127, 43: 127]
    for n in 70...79 { values[n] = 64 }
    return values
}()

/// Why a modulator is left out (or played in part), or nil if bellkeys plays it: velocity to
/// attenuation (any curve and amount: the region's velocity gains), the note-on modulators from
/// velocity and key (`noteModulators`), and the defaults whose work the engine does for every
/// instrument (CC7, CC10, CC11 and CC91, the pitch wheel) or that do nothing for a struck bell
/// at their default amounts. A live source's modulator (a controller, pressure, the wheel) is
/// read as a note starts and again as the source moves, but for one to the envelopes' times or
/// the sample's start, read only as the note starts (said: FluidSynth follows it).
public func modulatorLeftOut(_ modulator: SoundFontModulator) -> String? {
    // FluidSynth plays no modulator with a transform (nor does bellkeys).
    if modulator.amount == 0 || modulator.transform != 0 { return nil }
    if isVelocityToAttenuation(modulator) { return nil }
    let played = noteModulators(modulator)
    let readOnce = played?.contains { $0.isLive && $0.destination.isReadOnce } ?? false
    if played != nil, !readOnce { return nil }
    if defaultSoundFontModulators.contains(where: { $0 == modulator }) { return nil }
    let names: [Int: String] = [
        5: "the modulation LFO's pitch depth", 6: "vibrato depth", 7: "the modulation envelope's pitch depth",
        10: "the modulation LFO's cutoff depth", 11: "the modulation envelope's cutoff depth",
        13: "the modulation LFO's volume depth", 33: "the envelope's delay", 34: "the envelope's attack",
        35: "the envelope's hold", 36: "the envelope's decay", 37: "the envelope's sustain",
        38: "the envelope's release", 25: "the modulation envelope's delay", 26: "the modulation envelope's attack",
        27: "the modulation envelope's hold", 28: "the modulation envelope's decay",
        29: "the modulation envelope's sustain", 30: "the modulation envelope's release", 0: "the sample's start",
        4: "the sample's start (coarse)", 8: "filter cutoff",
        9: "filter resonance", 15: "chorus send",
        16: "reverb send",
        17: "pan", 48: "attenuation", 51: "coarse tune", 52: "fine tune",
    ]
    let sourceIndex = Int(modulator.source & 0x7F)
    let source =
        modulator.source & 0x80 != 0
        ? "CC\(sourceIndex)"
        : ([
            2: "velocity", 3: "key", 10: "poly pressure", 13: "channel pressure", 14: "pitch wheel",
            16: "pitch wheel range",
        ][sourceIndex] ?? "source \(sourceIndex)")
    let destination = names[Int(modulator.destination)] ?? "generator \(modulator.destination)"
    if readOnce {
        return "a modulator from \(source) to \(destination) (amount \(modulator.amount)) is read as notes start: "
            + "its source's later moves are left out"
    }
    return "a modulator from \(source) to \(destination) (amount \(modulator.amount)) is left out"
}

/// Whether `modulator` turns velocity (alone, or scaled by velocity) into attenuation.
func isVelocityToAttenuation(_ modulator: SoundFontModulator) -> Bool {
    let velocity = { (source: UInt16) in source & 0x80 == 0 && source & 0x7F == 2 }
    return modulator.destination == 48 && modulator.transform == 0 && velocity(modulator.source)
        && (modulator.amountSource & 0x7F == 0 && modulator.amountSource & 0x80 == 0
            || velocity(modulator.amountSource))
}
