/// What a note-off does to a key's bell.
public enum NoteOffMode: Sendable, Equatable {
    /// The bell rings out; note-off is ignored.
    case ring
    /// Note-off fades the bell to silence over `releaseSeconds`.
    case damp(releaseSeconds: Double)
}

/// How note-on velocity becomes gain. All curves give gain 1 at velocity 127.
public enum VelocityCurve: String, Sendable, CaseIterable {
    /// gain = (v/127)²: 40·log10(v/127) dB, the curve of the MIDI DLS and General MIDI specs.
    case square
    /// gain = v/127.
    case linear
    /// gain = 1 for every velocity.
    case fixed

    /// Linear gain for `velocity` 0...127.
    public func gain(velocity: Int) -> Float {
        let v = Float(max(0, min(127, velocity))) / 127
        switch self {
        case .square: return v * v
        case .linear: return v
        case .fixed: return velocity > 0 ? 1 : 0
        }
    }
}

/// What happens to notes that the instrument does not sound.
public enum UnmappedNotes: String, Sendable, CaseIterable {
    /// They are ignored (and counted).
    case ignore
    /// They are moved by octaves into the range the instrument sounds (its keys and regions
    /// together) and play what sounds there, if anything does, so a full-size keyboard plays
    /// bells on every key (`Instrument.soundingNoteForEveryNote`).
    case fold
}

/// One key of a map: a bell, its own sample at its own pitch. An instrument holds it as a
/// region (`Region(key:)`).
public struct KeySettings: Sendable, Equatable {
    /// MIDI note number 0...127.
    public var note: Int
    /// Index of the key's sample in the `SampleBank`.
    public var sampleIndex: Int
    /// Linear gain of this key.
    public var gain: Float
    public var noteOff: NoteOffMode
    /// Keys with the same non-zero group silence each other (and earlier strikes of themselves).
    public var chokeGroup: Int
    /// Where the key stands: its linear gains on the left and on the right channel, from the
    /// map's `pan` through `panGains`. 1 and 1 is the centre, exactly the mono bell on both.
    public var leftGain: Float
    public var rightGain: Float

    public init(
        note: Int, sampleIndex: Int, gain: Float = 1, noteOff: NoteOffMode = .ring,
        chokeGroup: Int = 0, leftGain: Float = 1, rightGain: Float = 1
    ) {
        self.note = note
        self.sampleIndex = sampleIndex
        self.gain = gain
        self.noteOff = noteOff
        self.chokeGroup = chokeGroup
        self.leftGain = leftGain
        self.rightGain = rightGain
    }
}

/// The playable instrument: a table of regions and global playing settings. Every source
/// compiles to it: a map's keys (each a region of one key, `Region(key:)`), an SFZ file's
/// regions, a SoundFont preset's zones, or both a map's keys and the instrument it names.
/// Thread: built on the control thread; the engine copies it into its own tables.
public struct Instrument: Sendable {
    /// Its regions: samples over key and velocity ranges at any pitch. A note starts every
    /// region that matches it; the regions the map's keys became come first (`bellCount`).
    public var regions: [Region]
    /// How many of `regions`, from the first, are a map's keys: bells, each one region of one key
    /// playing its sample at its own pitch (`Region(key:)`), in the map's order. `check`, the
    /// start-up line and the classroom call them bells; the engine plays them as any region.
    /// Thread: control (read by any).
    public var bellCount = 0
    /// Keys that switch articulations (`Region.keyswitch`) instead of sounding, and the switch
    /// in force before any is struck.
    public var keyswitchRange: ClosedRange<Int>?
    public var defaultKeyswitch: Int?
    /// Values MIDI controllers start at (CC number: value), for `Region.controllerRanges`; others start at 0.
    public var controllerDefaults: [Int: Int] = [:]
    public var velocityCurve: VelocityCurve
    public var unmappedNotes: UnmappedNotes
    /// Master volume in decibels (0 = unity), in `volumeRange`.
    public var masterVolumeDecibels: Double
    /// Every volume in decibels: a key's gain, a master volume in a map or set live (`--volume`,
    /// the keyboard's - and +, the teacher's page): -60 to +12 dB.
    public static let volumeRange = -60.0...12.0
    /// The room (off: the dry bells only).
    public var reverb: ReverbSettings
    /// How much darker a softer strike sounds, 0 (every strike the same timbre, only quieter)
    /// to 1: each voice goes through a low-pass whose cutoff rises with the velocity (open at 127).
    public var velocityTimbre: Double = 0
    /// Whether MIDI CC10 (pan) moves the channels: on for a map that places its bells (any key
    /// with a pan), off otherwise, so that a map without pan renders any MIDI file (General
    /// MIDI files are full of CC10) as it did before pan existed.
    public var followsPanController = false
    /// CC91's law for the channels that start on it (a channel keeps it through program
    /// changes): false, the square law of CC7 (value / 127, squared: bells and SFZ); true,
    /// FluidSynth's straight line, value / 128 (SoundFont presets, and maps of one with no keys of
    /// their own, whose channels start CC91 at 0, as FluidSynth's do).
    public var linearReverbSend = false
    /// Whether MIDI pitch bend bends the voices of its channel (±2 semitones until RPN 0 sets
    /// another range, up to 24): on for SFZ instruments, off for maps unless they ask (a bell in
    /// a tower does not bend, and General MIDI files are full of bends).
    public var followsPitchBend = false
    /// How far the wheel's full throw reaches, as a share of the channel's range: 1 (the range
    /// itself), or 127/128 for a SoundFont preset, whose default modulator moves fine tune by
    /// 12,700 cents × the sensitivity in semitones / 128 (FluidSynth: +198.4 cents at the top
    /// of a 2-semitone range, −198.4 at the bottom).
    public var pitchBendReach = 1.0
    /// Whether a key struck again while it is still held first lets go of its ringing voices,
    /// as a note-off would (the sustain pedal still holds them): FluidSynth's rule, on for
    /// SoundFont presets. Off for maps and SFZ instruments, where a bell struck again rings on
    /// under the new strike until the key's note-off.
    public var restrikeReleases = false
    /// Whether a choke (`Region.group`, `offBy`) silences only voices of the channel of the note
    /// that chokes: FluidSynth's rule for exclusive classes, on for SoundFont presets. Off for
    /// maps and SFZ instruments, whose groups choke across channels (as sfizz's do).
    public var chokesWithinChannel = false

    public init(
        regions: [Region] = [], velocityCurve: VelocityCurve = .square,
        unmappedNotes: UnmappedNotes = .ignore, masterVolumeDecibels: Double = 0,
        reverb: ReverbSettings = ReverbSettings(preset: .off)
    ) {
        self.regions = regions
        self.velocityCurve = velocityCurve
        self.unmappedNotes = unmappedNotes
        self.masterVolumeDecibels = masterVolumeDecibels
        self.reverb = reverb
    }

    /// An instrument of bells: each key a region of its own (`Region(key:)`).
    public init(
        keys: [KeySettings], velocityCurve: VelocityCurve = .square,
        unmappedNotes: UnmappedNotes = .ignore, masterVolumeDecibels: Double = 0,
        reverb: ReverbSettings = ReverbSettings(preset: .off)
    ) {
        self.init(
            regions: keys.map(Region.init(key:)), velocityCurve: velocityCurve, unmappedNotes: unmappedNotes,
            masterVolumeDecibels: masterVolumeDecibels, reverb: reverb)
        bellCount = keys.count
    }

    /// The regions a map's keys became (see `bellCount`). Thread: any.
    public var bells: ArraySlice<Region> { regions.prefix(bellCount) }

    /// The lowest and highest note that sounds: its regions' (not the release samples', nor
    /// the keyswitches'), or nil when nothing sounds. Thread: any.
    public var soundingRange: ClosedRange<Int>? {
        let ranges = regions.filter { !$0.triggersOnRelease }.map(\.keyRange)
        let notes = ranges.map { max(0, $0.lowerBound)...min(127, $0.upperBound) }.filter { !$0.isEmpty }
        guard let low = notes.map(\.lowerBound).min(), let high = notes.map(\.upperBound).max() else { return nil }
        return low...high
    }

    /// For each MIDI note 0...127, the note whose regions it plays: itself when a region (not
    /// a release sample) holds it; else, when the instrument folds unmapped notes and the note
    /// lies outside the range it sounds, the note it lands on moved by octaves into that range,
    /// if a region holds that one; else nil (the note sounds no region but release samples of
    /// its own). The engine's note tables are made from it (a folded note plays the regions of
    /// the note it lands on, at that note's pitch). Thread: any.
    public func soundingNoteForEveryNote() -> [Int?] {
        var sounds = [Bool](repeating: false, count: 128)
        for region in regions where !region.triggersOnRelease {
            for note in region.keyRange where (0...127).contains(note) { sounds[note] = true }
        }
        var table: [Int?] = (0..<128).map { sounds[$0] ? $0 : nil }
        guard unmappedNotes == .fold, let low = sounds.firstIndex(of: true), let high = sounds.lastIndex(of: true)
        else { return table }
        for note in 0..<128 where !sounds[note] && (note < low || note > high) {
            var folded = note
            while folded < low { folded += 12 }
            while folded > high { folded -= 12 }
            if folded >= low, sounds[folded] { table[note] = folded }
        }
        return table
    }
}

/// Linear gain for a level in decibels (control thread).
public func linearGain(decibels: Double) -> Float {
    // 10^(dB/20) without Foundation: exp2(dB * log2(10) / 20), exp2 by squaring.
    if decibels <= -200 { return 0 }
    return Float(exp2(decibels * 0.166_096_404_744_368_12))
}

/// 2^x for finite x, accurate to about 1e-15 relative (control thread).
func exp2(_ x: Double) -> Double {
    let whole = x.rounded(.down)
    let fraction = x - whole // 0 ..< 1
    // 2^f = e^(f ln2), Taylor series; converges fast for f ln2 < 0.7.
    let y = fraction * 0.693_147_180_559_945_3
    var term = 1.0, sum = 1.0
    for n in 1...24 {
        term *= y / Double(n)
        sum += term
    }
    var result = sum
    var e = Int(whole)
    while e > 0 {
        result *= 2
        e -= 1
    }
    while e < 0 {
        result /= 2
        e += 1
    }
    return result
}

/// The pan law: equal power, normalised to unity at the centre. A position `pan` from -1 (left)
/// to 1 (right) is the angle θ = (pan + 1) × π/4, from 0 to π/2, and the gains are
/// left = √2 cos θ, right = √2 sin θ: the power left² + right² is 2 wherever the bell stands
/// (a constant loudness across the table), the centre is exactly 1 and 1 (the mono bell on both
/// sides, today's bytes), and atan(right / left) = θ whatever the normalisation. The ends are
/// exactly √2 and 0. Thread: any (control in practice: tables are made from it).
public func panGains(_ pan: Double) -> (left: Float, right: Float) {
    if pan == 0 { return (1, 1) }
    if pan <= -1 { return (Float(2.0.squareRoot()), 0) }
    if pan >= 1 { return (0, Float(2.0.squareRoot())) }
    let theta = (pan + 1) * 0.785_398_163_397_448_3 // π/4
    let (sine, cosine) = sineCosine(theta)
    let root2 = 2.0.squareRoot()
    return (Float(root2 * cosine), Float(root2 * sine))
}

/// The balance of a stereo sample at `pan` (-1 to 1): the far side turned down linearly, the
/// near side kept, so the centre is exactly the recording (1 and 1) and an end is one side
/// alone. Thread: any.
public func balanceGains(_ pan: Double) -> (left: Float, right: Float) {
    let p = max(-1, min(1, pan))
    return p >= 0 ? (Float(1 - p), 1) : (1, Float(1 + p))
}

/// The position (-1 to 1) of a MIDI pan controller value (CC10): 64 is the centre, 0 the left,
/// 127 the right (63 steps to the right, 64 to the left, as General MIDI has it).
public func panPosition(controllerValue value: Int) -> Double {
    value >= 64 ? Double(value - 64) / 63 : Double(value - 64) / 64
}

/// sin and cos of `x` in 0...π/2 (Taylor series, about 1e-16 there), without Foundation.
/// Thread: any. Real-time safe.
@_noLocks
func sineCosine(_ x: Double) -> (sine: Double, cosine: Double) {
    var sine = 0.0, cosine = 0.0
    var term = 1.0 // x^n / n!
    for n in 0...26 {
        switch n % 4 {
        case 0: cosine += term
        case 1: sine += term
        case 2: cosine -= term
        default: sine -= term
        }
        term *= x / Double(n + 1)
    }
    return (sine, cosine)
}

/// `exp2` for BellkeysEngine, under a name Glibc's `exp2` does not share (a package-wide
/// `exp2` would be one more candidate beside libm's wherever Glibc is imported).
package func exactExp2(_ x: Double) -> Double { exp2(x) }

/// `sineCosine` for BellkeysEngine. Thread: any. Real-time safe.
@_noLocks
package func exactSineCosine(_ x: Double) -> (sine: Double, cosine: Double) { sineCosine(x) }

/// The coefficient c of the two one-pole low-passes in a row (y += c (x - y), 12 dB an octave)
/// of a strike at `velocity` on a bell of MIDI note `note`, with `amount` 0 to 1 of velocity
/// timbre: the cutoff is the bell's pitch times 2^(7 - amount × (7 - 6 v/127)): with amount 1,
/// 6 v/127 octaves above it (at velocity 30, 1.4 octaves: the hum, the prime and the tierce pass,
/// the nominal and the strike's clang are softened, as under a soft mallet; at velocity 1, the
/// bell's pitch). The filter is open (exactly 1) at velocity 127 or amount 0.
/// Thread: control (tables are made from it).
public func timbreCoefficient(note: Int, velocity: Int, amount: Double, sampleRate: Int) -> Float {
    if amount <= 0 || velocity >= 127 { return 1 }
    let pitch = 440 * exp2(Double(note - 69) / 12)
    let octaves = 7 - amount * (7 - 6 * Double(velocity) / 127)
    let cutoff = pitch * exp2(octaves)
    let w = 2 * 3.141_592_653_589_793 * cutoff / Double(sampleRate)
    if w >= 3.141_592_653_589_793 { return 1 }
    // c = 1 - e^(-w): e^(-w) = 2^(-w / ln 2).
    return Float(1 - exp2(-w * 1.442_695_040_888_963_4))
}
