import BellkeysModel

// What an SFZ file describes, resolved: one plain value per <region>, every opcode inherited
// and typed, with the defaults of the SFZ spec and sfizz (Defaults.cpp).

/// `trigger`: what starts the region.
public enum SFZTrigger: String, Sendable, CaseIterable { case attack, release, first, legato }

/// `off_mode`: how a voice stopped by `off_by` ends (fast: a 5 ms fade; normal: its release;
/// time: a fade over `off_time`).
public enum SFZOffMode: String, Sendable, CaseIterable { case fast, normal, time }

/// `xf_velcurve`: equal power (square roots) or equal gain (straight lines).
public enum SFZCrossfadeCurve: String, Sendable, CaseIterable { case power, gain }

/// An SFZ 1 envelope of pitch or cutoff (`pitcheg_*`, `fileg_*`), as sfizz reads it: times in
/// seconds, `start` and `sustain` in percent, `depth` in cents at full level, plus
/// `velToDepth` × velocity / 127 (`*_vel2depth`).
public struct SFZEnvelopeOpcodes: Sendable, Equatable {
    public var delay = 0.0, start = 0.0, attack = 0.0, hold = 0.0, decay = 0.0
    public var sustain = 100.0
    public var release = 0.0
    public var depth = 0.0, velToDepth = 0.0

    public init() {}

    /// Whether it moves anything.
    public var isUsed: Bool { depth != 0 || velToDepth != 0 }
}

/// An SFZ 1 LFO (`amplfo_*`, `pitchlfo_*`, `fillfo_*`), as sfizz reads it: `frequency` in Hz,
/// `delay` and `fade` in seconds, `depth` in dB (amplfo) or cents, `wave` by sfizz's numbers
/// (its default for these, 1, a sine).
public struct SFZLFOOpcodes: Sendable, Equatable {
    public var frequency = 0.0, delay = 0.0, fade = 0.0, depth = 0.0
    public var wave = 1

    public init() {}
}

/// One <region> with every opcode resolved through <global> → <master> → <group> → <region>
/// (later overrides earlier), defaults as the SFZ spec and sfizz give them.
///
/// Values outside an opcode's range are refused when the file is read (the range is in the
/// error's fix), except `loop_start` and `loop_end`, which sfizz clamps to 2147483647. `volume` is
/// not limited to the spec's +6 dB (sfizz allows -144 to 48; real files use +30.7).
public struct SFZRegion: Sendable, Equatable {
    /// The <region> header.
    public var location: SFZLocation
    /// `default_path` + `sample`, each trimmed of spaces, every `\` turned into `/`; inner spaces
    /// and `#` kept. Relative to the top .sfz file's folder, or absolute if it starts with `/`.
    public var sample: String
    /// Where the `sample=` value is (in this region or the header it inherits it from).
    public var sampleLocation: SFZLocation
    /// `lokey`, `hikey` (note numbers or names; `key=` sets both and `pitchKeycenter`), after
    /// `note_offset` and `octave_offset`, clamped to 0...127.
    public var loKey = 0, hiKey = 127
    /// `lovel`, `hivel`, inclusive (sfizz's default `lovel` is 0).
    public var loVel = 0, hiVel = 127
    /// `pitch_keycenter`, shifted like the keys; nil for `pitch_keycenter=sample` (the loader
    /// takes it from the sample file's root key).
    public var pitchKeycenter: Int? = 60
    /// `pitch_keytrack`, cents per key (-1200...1200).
    public var pitchKeytrack = 100.0
    /// `tune` (alias `pitch`), cents (-2400...2400).
    public var tune = 0.0
    /// `transpose`, semitones (-127...127).
    public var transpose = 0
    /// dB: `volume` as inherited, plus `global_volume`, `master_volume` and `group_volume`
    /// (each -144...48).
    public var volume = 0.0
    /// `pan`, -100 (left) ... 100 (right).
    public var pan = 0.0
    /// `ampeg_delay`, `ampeg_attack`, `ampeg_hold`, `ampeg_decay`, seconds (0...100).
    public var ampegDelay = 0.0, ampegAttack = 0.0, ampegHold = 0.0, ampegDecay = 0.0
    /// `ampeg_sustain`, percent (0...100).
    public var ampegSustain = 100.0
    /// `ampeg_release`, seconds (0...100; the spec's default).
    public var ampegRelease = 0.001
    /// `amp_veltrack`, percent (-100...100).
    public var ampVeltrack = 100.0
    /// `amp_velcurve_N` points as given (N 0...127, gain 0...1), sorted by N.
    public var ampVelcurve: [(velocity: Int, gain: Double)] = []
    /// `offset`, frames (0...2147483647).
    public var offset = 0
    /// `loop_mode`; nil when not given (the loader decides from the sample file's loop).
    public var loopMode: LoopMode? = nil
    /// `loop_start`, `loop_end` (aliases `loopstart`, `loopend`), frames, the end inclusive.
    public var loopStart: Int? = nil, loopEnd: Int? = nil
    /// `fil_type`.
    public var filterType: FilterKind = .lowPass2
    /// `cutoff`, Hz (0...20000); nil: no filter.
    public var cutoff: Double? = nil
    /// `resonance`, dB (0...96).
    public var resonance = 0.0
    /// `fil_veltrack`, cents (-12000...12000).
    public var filVeltrack = 0.0
    /// `fil_keytrack`, cents per key (0...1200).
    public var filKeytrack = 0.0
    /// `seq_length`, `seq_position` (1...100).
    public var seqLength = 1, seqPosition = 1
    /// `lorand`, `hirand` (0...1).
    public var loRand = 0.0, hiRand = 1.0
    /// `xfin_lovel`, `xfin_hivel`, `xfout_lovel`, `xfout_hivel` (0...127).
    public var xfinLoVel = 0, xfinHiVel = 0, xfoutLoVel = 127, xfoutHiVel = 127
    /// `xf_velcurve`.
    public var xfVelcurve: SFZCrossfadeCurve = .power
    /// `sw_lokey`, `sw_hikey`, `sw_last`, `sw_default`: note numbers (names allowed), shifted by
    /// `note_offset` and `octave_offset` like the keys.
    public var swLoKey: Int? = nil, swHiKey: Int? = nil, swLast: Int? = nil, swDefault: Int? = nil
    /// `loccN`, `hiccN` (N and values 0...127): an entry for each N given, the missing side 0 or 127.
    public var ccRanges: [Int: ClosedRange<Int>] = [:]
    /// `trigger`.
    public var trigger: SFZTrigger = .attack
    /// `group` (a 32-bit signed number).
    public var group = 0
    /// `off_by` (a 32-bit signed number).
    public var offBy: Int? = nil
    /// `off_mode`.
    public var offMode: SFZOffMode = .fast
    /// `off_time`, seconds (0...100; sfizz's default).
    public var offTime = 0.006
    /// `bend_up`, `bend_down`, cents (-12000...12000); nil where the file gives none.
    public var bendUp: Double? = nil, bendDown: Double? = nil
    /// `pitcheg_*`, `fileg_*`.
    public var pitchEG = SFZEnvelopeOpcodes(), filterEG = SFZEnvelopeOpcodes()
    /// `amplfo_*`, `pitchlfo_*`, `fillfo_*`.
    public var amplitudeLFO = SFZLFOOpcodes(), pitchLFO = SFZLFOOpcodes(), filterLFO = SFZLFOOpcodes()

    public init(location: SFZLocation, sample: String, sampleLocation: SFZLocation) {
        self.location = location
        self.sample = sample
        self.sampleLocation = sampleLocation
    }

    public static func == (a: SFZRegion, b: SFZRegion) -> Bool {
        // Every stored property (SFZRegionTests counts them, so a new one cannot be left out).
        a.location == b.location && a.sample == b.sample && a.sampleLocation == b.sampleLocation
            && a.loKey == b.loKey && a.hiKey == b.hiKey && a.loVel == b.loVel && a.hiVel == b.hiVel
            && a.pitchKeycenter == b.pitchKeycenter && a.pitchKeytrack == b.pitchKeytrack && a.tune == b.tune
            && a.transpose == b.transpose && a.volume == b.volume && a.pan == b.pan
            && a.ampegDelay == b.ampegDelay && a.ampegAttack == b.ampegAttack && a.ampegHold == b.ampegHold
            && a.ampegDecay == b.ampegDecay && a.ampegSustain == b.ampegSustain && a.ampegRelease == b.ampegRelease
            && a.ampVeltrack == b.ampVeltrack
            && a.ampVelcurve.elementsEqual(b.ampVelcurve, by: { $0.velocity == $1.velocity && $0.gain == $1.gain })
            && a.offset == b.offset && a.loopMode == b.loopMode && a.loopStart == b.loopStart
            && a.loopEnd == b.loopEnd && a.filterType == b.filterType && a.cutoff == b.cutoff
            && a.resonance == b.resonance && a.filVeltrack == b.filVeltrack && a.filKeytrack == b.filKeytrack
            && a.seqLength == b.seqLength && a.seqPosition == b.seqPosition && a.loRand == b.loRand
            && a.hiRand == b.hiRand && a.xfinLoVel == b.xfinLoVel && a.xfinHiVel == b.xfinHiVel
            && a.xfoutLoVel == b.xfoutLoVel && a.xfoutHiVel == b.xfoutHiVel && a.xfVelcurve == b.xfVelcurve
            && a.swLoKey == b.swLoKey && a.swHiKey == b.swHiKey && a.swLast == b.swLast
            && a.swDefault == b.swDefault && a.ccRanges == b.ccRanges && a.trigger == b.trigger
            && a.group == b.group && a.offBy == b.offBy && a.offMode == b.offMode && a.offTime == b.offTime
            && a.bendUp == b.bendUp && a.bendDown == b.bendDown && a.pitchEG == b.pitchEG
            && a.filterEG == b.filterEG && a.amplitudeLFO == b.amplitudeLFO && a.pitchLFO == b.pitchLFO
            && a.filterLFO == b.filterLFO
    }
}

/// An unsupported opcode or header (or one accepted with no effect), reported once, where it
/// first appears.
public struct SFZWarning: Sendable, Equatable, CustomStringConvertible {
    public var location: SFZLocation
    public var message: String

    public init(location: SFZLocation, message: String) {
        self.location = location
        self.message = message
    }

    /// `FILE:LINE:COLUMN: MESSAGE`.
    public var description: String { "\(location): \(message)" }
}

/// An SFZ file read: its regions in file order, what it asked for that bellkeys does not do,
/// and the files it included.
public struct SFZInstrumentDescription: Sendable {
    public var regions: [SFZRegion]
    /// Each unsupported opcode or header name once (its first location), in file order.
    public var warnings: [SFZWarning]
    /// Every #include'd path as passed to `read` (relative to the top file's folder, `\` turned
    /// into `/`), once each, for reloading and `check`.
    public var includedFiles: [String]
    /// `set_ccN` in <control>: the value (0...127) controller N (0...127) starts at.
    public var controllerDefaults: [Int: Int]

    public init(
        regions: [SFZRegion], warnings: [SFZWarning] = [], includedFiles: [String] = [],
        controllerDefaults: [Int: Int] = [:]
    ) {
        self.regions = regions
        self.warnings = warnings
        self.includedFiles = includedFiles
        self.controllerDefaults = controllerDefaults
    }
}
