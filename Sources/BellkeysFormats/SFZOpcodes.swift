import BellkeysModel

// The opcodes bellkeys reads in <global>, <master>, <group> and <region>, with each value's
// type and range, and the readers of numbers, notes and words. Ranges are sfizz's
// (Defaults.cpp); a value outside one is an error, except where sfizz clamps (loop_start,
// loop_end above 2147483647).

/// What an opcode does to the regions under it.
enum SFZMeaning {
    case set(SFZSetter)
    /// Refused: the problem is recorded.
    case invalid
    case unsupported
    /// Read and checked, with no effect in bellkeys (warned once).
    case noEffect
    /// A <control> opcode outside <control>.
    case controlOnly
}

private let int32Range = Int(Int32.min)...Int(Int32.max)
private let frameRange = 0...Int(Int32.max)

extension SFZInstrumentBuilder {
    mutating func regionOpcode(_ op: SFZOpcode) -> SFZMeaning {
        func assign<T>(_ path: WritableKeyPath<SFZRegionDraft, T>, _ value: T?) -> SFZMeaning {
            guard let value else { return .invalid }
            return .set { $0[keyPath: path] = value }
        }
        func assignOptional<T>(_ path: WritableKeyPath<SFZRegionDraft, T?>, _ value: T?) -> SFZMeaning {
            guard let value else { return .invalid }
            return .set { $0[keyPath: path] = value }
        }
        switch op.name {
        case "sample":
            let sample = (value: op.value, location: op.valueLocation)
            return .set { $0.sample = sample }
        case "lokey": return assign(\.region.loKey, note(op))
        case "hikey": return assign(\.region.hiKey, note(op))
        case "key":
            guard let key = note(op) else { return .invalid }
            return .set { ($0.region.loKey, $0.region.hiKey, $0.region.pitchKeycenter) = (key, key, key) }
        case "lovel": return assign(\.region.loVel, integer(op, 0...127, unit: ""))
        case "hivel": return assign(\.region.hiVel, integer(op, 0...127, unit: ""))
        case "pitch_keycenter":
            if op.value == "sample" { return .set { $0.region.pitchKeycenter = nil } }
            return assignOptional(\.region.pitchKeycenter, note(op))
        case "pitch_keytrack": return assign(\.region.pitchKeytrack, number(op, -1200...1200, unit: "cents per key"))
        case "tune", "pitch": return assign(\.region.tune, number(op, -2400...2400, unit: "cents"))
        case "transpose": return assign(\.region.transpose, integer(op, -127...127, unit: "semitones"))
        case "volume": return assign(\.region.volume, number(op, -144...48, unit: "dB"))
        case "global_volume": return assign(\.globalVolume, number(op, -144...48, unit: "dB"))
        case "master_volume": return assign(\.masterVolume, number(op, -144...48, unit: "dB"))
        case "group_volume": return assign(\.groupVolume, number(op, -144...48, unit: "dB"))
        case "pan": return assign(\.region.pan, number(op, -100...100, unit: "percent"))
        case "ampeg_delay": return assign(\.region.ampegDelay, number(op, 0...100, unit: "seconds"))
        case "ampeg_attack": return assign(\.region.ampegAttack, number(op, 0...100, unit: "seconds"))
        case "ampeg_hold": return assign(\.region.ampegHold, number(op, 0...100, unit: "seconds"))
        case "ampeg_decay": return assign(\.region.ampegDecay, number(op, 0...100, unit: "seconds"))
        case "ampeg_release": return assign(\.region.ampegRelease, number(op, 0...100, unit: "seconds"))
        case "ampeg_sustain": return assign(\.region.ampegSustain, number(op, 0...100, unit: "percent"))
        case "amp_veltrack": return assign(\.region.ampVeltrack, number(op, -100...100, unit: "percent"))
        case "offset": return assign(\.region.offset, integer(op, frameRange, unit: "frames"))
        case "loop_mode", "loopmode": return assignOptional(\.region.loopMode, word(op, LoopMode.self))
        case "loop_start", "loopstart":
            return assignOptional(\.region.loopStart, integer(op, frameRange, unit: "frames", clampsAbove: true))
        case "loop_end", "loopend":
            return assignOptional(\.region.loopEnd, integer(op, frameRange, unit: "frames", clampsAbove: true))
        case "fil_type": return assign(\.region.filterType, word(op, FilterKind.self))
        case "cutoff": return assignOptional(\.region.cutoff, number(op, 0...20_000, unit: "Hz"))
        case "resonance": return assign(\.region.resonance, number(op, 0...96, unit: "dB"))
        case "fil_veltrack": return assign(\.region.filVeltrack, number(op, -12_000...12_000, unit: "cents"))
        case "fil_keytrack": return assign(\.region.filKeytrack, number(op, 0...1200, unit: "cents per key"))
        case "seq_length": return assign(\.region.seqLength, integer(op, 1...100, unit: ""))
        case "seq_position": return assign(\.region.seqPosition, integer(op, 1...100, unit: ""))
        case "lorand": return assign(\.region.loRand, number(op, 0...1, unit: ""))
        case "hirand": return assign(\.region.hiRand, number(op, 0...1, unit: ""))
        case "xfin_lovel": return assign(\.region.xfinLoVel, integer(op, 0...127, unit: ""))
        case "xfin_hivel": return assign(\.region.xfinHiVel, integer(op, 0...127, unit: ""))
        case "xfout_lovel": return assign(\.region.xfoutLoVel, integer(op, 0...127, unit: ""))
        case "xfout_hivel": return assign(\.region.xfoutHiVel, integer(op, 0...127, unit: ""))
        case "xf_velcurve": return assign(\.region.xfVelcurve, word(op, SFZCrossfadeCurve.self))
        case "sw_lokey": return assignOptional(\.region.swLoKey, note(op))
        case "sw_hikey": return assignOptional(\.region.swHiKey, note(op))
        case "sw_last": return assignOptional(\.region.swLast, note(op))
        case "sw_default": return assignOptional(\.region.swDefault, note(op))
        case "trigger": return assign(\.region.trigger, word(op, SFZTrigger.self))
        case "group": return assign(\.region.group, integer(op, int32Range, unit: ""))
        case "off_by": return assignOptional(\.region.offBy, integer(op, int32Range, unit: ""))
        case "off_mode": return assign(\.region.offMode, word(op, SFZOffMode.self))
        case "off_time":
            // As sfizz reads it: an off_time makes the choke a fade over it (off_mode=time),
            // unless an off_mode comes after it.
            guard let seconds = number(op, 0...100, unit: "seconds") else { return .invalid }
            return .set {
                $0.region.offTime = seconds
                $0.region.offMode = .time
            }
        case "bend_up": return assignOptional(\.region.bendUp, number(op, -12_000...12_000, unit: "cents"))
        case "bend_down": return assignOptional(\.region.bendDown, number(op, -12_000...12_000, unit: "cents"))
        case "ampeg_dynamic": return integer(op, 0...1, unit: "") == nil ? .invalid : .noEffect
        case "default_path", "note_offset", "octave_offset": return .controlOnly
        default: return modulationOpcode(op) ?? numberedOpcode(op)
        }
    }

    /// An opcode whose name ends in a number (amp_velcurve_N, loccN, hiccN, set_ccN, label_ccN).
    private mutating func numberedOpcode(_ op: SFZOpcode) -> SFZMeaning {
        if let n = sfzIndex(op.name, after: "amp_velcurve_") {
            guard (0...127).contains(n) else {
                problem(
                    op.location, op.name, "\(op.name): the velocity is out of range",
                    fix: "amp_velcurve_N takes a velocity N from 0 to 127")
                return .invalid
            }
            guard let gain = number(op, 0...1, unit: "") else { return .invalid }
            return .set { $0.velocityCurve[n] = gain }
        }
        for (prefix, low) in [("locc", true), ("hicc", false)] {
            // Controllers past 127 are ARIA's extended ones (velocity, bend, ...): not supported.
            guard let n = sfzIndex(op.name, after: prefix), (0...127).contains(n) else { continue }
            guard let value = integer(op, 0...127, unit: "") else { return .invalid }
            return low ? .set { $0.loCC[n] = value } : .set { $0.hiCC[n] = value }
        }
        if sfzIndex(op.name, after: "set_cc") != nil || sfzIndex(op.name, after: "label_cc") != nil {
            return .controlOnly
        }
        return .unsupported
    }

    /// The fix for a value outside `low...high` or of the wrong kind.
    private func rangeText(_ low: String, _ high: String, _ unit: String) -> String {
        "from \(low) to \(high)\(unit.isEmpty ? "" : " (\(unit))")"
    }

    /// A decimal number (`-4.305226`, `30.000000`, `.5`, `1e-3`) from `range`.
    mutating func number(_ op: SFZOpcode, _ range: ClosedRange<Double>, unit: String) -> Double? {
        var span: String { rangeText(formatNumber(range.lowerBound), formatNumber(range.upperBound), unit) }
        guard isSFZDecimal(op.value), let n = Double(op.value) else {
            problem(op.valueLocation, op.name, "\(sfzQuoted(op.value)) is not a number", fix: "write a number \(span)")
            return nil
        }
        guard range.contains(n) else {
            problem(op.valueLocation, op.name, "\(op.value) is out of range", fix: "use a number \(span)")
            return nil
        }
        return n
    }

    /// A whole number from `range`; above it, `range.upperBound` if `clampsAbove` (as sfizz
    /// does for loop points).
    mutating func integer(
        _ op: SFZOpcode, _ range: ClosedRange<Int>, unit: String, clampsAbove: Bool = false
    ) -> Int? {
        var span: String { rangeText(String(range.lowerBound), String(range.upperBound), unit) }
        guard isSFZInteger(op.value) else {
            let kind = isSFZDecimal(op.value) ? "a whole number" : "a number"
            problem(
                op.valueLocation, op.name, "\(sfzQuoted(op.value)) is not \(kind)", fix: "write a whole number \(span)")
            return nil
        }
        let n = Int(op.value) ?? (op.value.hasPrefix("-") ? Int.min : Int.max)
        if clampsAbove && n > range.upperBound { return range.upperBound }
        guard range.contains(n) else {
            problem(op.valueLocation, op.name, "\(op.value) is out of range", fix: "use a whole number \(span)")
            return nil
        }
        return n
    }

    /// A MIDI note: a number 0...127 or a name (`c4` is 60).
    mutating func note(_ op: SFZOpcode) -> Int? {
        let fix = "use a note number from 0 to 127 or a name like c4 (60), c#4 or db4"
        if isSFZInteger(op.value) {
            if let n = Int(op.value), (0...127).contains(n) { return n }
            problem(op.valueLocation, op.name, "\(op.value) is out of range", fix: fix)
        } else if let n = sfzNote(named: op.value) {
            return n
        } else {
            problem(op.valueLocation, op.name, "\(sfzQuoted(op.value)) is not a note", fix: fix)
        }
        return nil
    }

    /// One of the words of `T`.
    mutating func word<T: RawRepresentable & CaseIterable>(_ op: SFZOpcode, _ type: T.Type) -> T?
    where T.RawValue == String {
        if let value = T(rawValue: op.value) { return value }
        let words = T.allCases.map(\.rawValue).joined(separator: ", ")
        problem(
            op.valueLocation, op.name, "\(sfzQuoted(op.value)) is not one of \(words)",
            fix: "use one of \(words) (the values bellkeys plays)")
        return nil
    }
}

/// `[+-]digits`.
func isSFZInteger(_ s: String) -> Bool {
    var digits = s.utf8[...]
    if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { digits = digits.dropFirst() }
    return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
}

/// `[+-]digits[.digits][e[+-]digits]`, with digits on at least one side of the point.
func isSFZDecimal(_ s: String) -> Bool {
    var rest = s.utf8[...]
    func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    func digitCount() -> Int {
        let count = rest.prefix(while: isDigit).count
        rest = rest.dropFirst(count)
        return count
    }
    if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { rest = rest.dropFirst() }
    var mantissa = digitCount()
    if rest.first == UInt8(ascii: ".") {
        rest = rest.dropFirst()
        mantissa += digitCount()
    }
    guard mantissa > 0 else { return false }
    if let e = rest.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
        rest = rest.dropFirst()
        if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { rest = rest.dropFirst() }
        guard digitCount() > 0 else { return false }
    }
    return rest.isEmpty
}

private let sfzPitchClasses: [Unicode.Scalar: Int] = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11]

/// The MIDI note of an SFZ note name, as sfizz reads them (Opcode.cpp readNoteValue): a letter,
/// one optional accidental (`#`/`♯` on c d f g a, `b`/`♭` on d e g a b), an octave from -1 to 9;
/// case-insensitive; `c4` is 60. Nil if it is not one or lies outside 0...127. (Stricter than
/// `midiNote(named:)`, which maps files keep.)
func sfzNote(named name: String) -> Int? {
    var rest = Array(name.lowercased().unicodeScalars)[...]
    guard let letter = rest.popFirst(), let pitchClass = sfzPitchClasses[letter] else { return nil }
    var accidental = 0
    if let c = rest.first, c == "#" || c == "♯" {
        guard "cdfga".unicodeScalars.contains(letter) else { return nil }
        accidental = 1
        rest = rest.dropFirst()
    } else if let c = rest.first, c == "b" || c == "♭" {
        guard "degab".unicodeScalars.contains(letter) else { return nil }
        accidental = -1
        rest = rest.dropFirst()
    }
    let octaveText = String(String.UnicodeScalarView(rest))
    guard isSFZInteger(octaveText), !octaveText.hasPrefix("+"), let octave = Int(octaveText), (-1...9).contains(octave)
    else { return nil }
    let note = (octave + 1) * 12 + pitchClass + accidental
    return (0...127).contains(note) ? note : nil
}
