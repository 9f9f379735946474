/// A SoundFont 2 (or SF3) file's structure as read: its presets, instruments and sample headers
/// (the `pdta` chunk), and where its sample data lies (`smpl`, `sm24`), which is not read here.
/// SoundFont 2.04 (sections 4 to 8) gives the layout; where it leaves room, FluidSynth's reader
/// decides (which generators a zone keeps, what makes a global zone).
public struct SoundFont: Sendable {
    /// The file as the user named it.
    public var file: String
    /// `ifil`: 2.x for SoundFont 2, 3.x for SF3 (Ogg Vorbis samples).
    public var versionMajor = 2, versionMinor = 1
    /// `INAM`: the font's name.
    public var name = ""
    public var presets: [SoundFontPreset] = []
    public var instruments: [SoundFontInstrument] = []
    public var samples: [SoundFontSample] = []
    /// Where `smpl` (16-bit words; an SF3's Ogg streams) and `sm24` (the low bytes of 24-bit
    /// samples) lie in the file: byte offset and length.
    public var sampleData = 0..<0
    public var sampleLowBytes: Range<Int>?
    /// Where the sample headers (`shdr`, 46 bytes each) start in the file, for messages.
    public var sampleHeadersOffset = 0

    /// Whether the samples are compressed (Ogg Vorbis: SF3, `ifil` 3.x).
    public var isCompressed: Bool { versionMajor == 3 }

    /// The preset at `bank` and `program` (the first such, as FluidSynth finds it).
    public func preset(bank: Int, program: Int) -> SoundFontPreset? {
        presets.first { $0.bank == bank && $0.program == program }
    }
}

/// A preset: what a bank and program number select. Its zones name instruments.
public struct SoundFontPreset: Sendable {
    public var name: String
    public var program: Int
    public var bank: Int
    public var global: SoundFontZone?
    public var zones: [SoundFontZone]
}

/// An instrument: zones that name samples.
public struct SoundFontInstrument: Sendable {
    public var name: String
    public var global: SoundFontZone?
    public var zones: [SoundFontZone]
}

/// A zone: generators (by number, the raw 16-bit amount) and modulators, and the instrument (in
/// a preset) or sample (in an instrument) it plays; nil for a global zone.
public struct SoundFontZone: Sendable {
    public var generators: [Int: Int16] = [:]
    public var modulators: [SoundFontModulator] = []
    public var target: Int?

    /// A range generator's low and high bytes (nil: not given). A reversed range (low above
    /// high) matches nothing, as in FluidSynth: it is returned as 128...128.
    public func range(_ generator: SoundFontGenerator) -> ClosedRange<Int>? {
        guard let raw = generators[generator.rawValue] else { return nil }
        let bits = UInt16(bitPattern: raw)
        let low = Int(bits & 0xFF), high = Int(bits >> 8)
        return low <= high ? low...high : 128...128
    }
}

/// A modulator record (SoundFont 2.04 section 8.2).
public struct SoundFontModulator: Sendable, Equatable {
    public var source: UInt16
    public var destination: UInt16
    public var amount: Int16
    public var amountSource: UInt16
    public var transform: UInt16

    public init(source: UInt16, destination: UInt16, amount: Int16, amountSource: UInt16, transform: UInt16) {
        self.source = source
        self.destination = destination
        self.amount = amount
        self.amountSource = amountSource
        self.transform = transform
    }

    /// Whether it is the same modulator as `other` apart from the amount (section 9.5.1).
    public func isSame(as other: SoundFontModulator) -> Bool {
        source == other.source && destination == other.destination && amountSource == other.amountSource
            && transform == other.transform
    }
}

/// A sample header (`shdr`).
public struct SoundFontSample: Sendable {
    public var name: String
    /// In 16-bit words from the start of `smpl` (an SF3's compressed sample: byte offsets of its
    /// Ogg stream); `end` is the first word after the sample.
    public var start: Int, end: Int
    /// The loop's first word and the word after it (an SF3's: frames of the decoded sample).
    public var loopStart: Int, loopEnd: Int
    public var sampleRate: Int
    /// The key at which it sounds at its recorded pitch (255: unpitched), and a correction in cents.
    public var originalPitch: Int
    public var pitchCorrection: Int
    /// The other side of a stereo pair, and the type (1 mono, 2 right, 4 left, 8 linked; 0x8000
    /// in ROM; 0x10 compressed).
    public var link: Int
    public var type: Int

    public var isROM: Bool { type & 0x8000 != 0 }
    public var isCompressed: Bool { type & 0x10 != 0 }
}

/// Generator numbers (SoundFont 2.04 section 8.1.2).
public enum SoundFontGenerator: Int, Sendable, CaseIterable {
    case startAddrsOffset = 0, endAddrsOffset, startloopAddrsOffset, endloopAddrsOffset, startAddrsCoarseOffset
    case modLfoToPitch, vibLfoToPitch, modEnvToPitch, initialFilterFc, initialFilterQ, modLfoToFilterFc
    case modEnvToFilterFc, endAddrsCoarseOffset, modLfoToVolume
    case chorusEffectsSend = 15, reverbEffectsSend, pan
    case delayModLFO = 21, freqModLFO, delayVibLFO, freqVibLFO, delayModEnv, attackModEnv, holdModEnv
    case decayModEnv, sustainModEnv, releaseModEnv, keynumToModEnvHold, keynumToModEnvDecay
    case delayVolEnv, attackVolEnv, holdVolEnv, decayVolEnv, sustainVolEnv, releaseVolEnv
    case keynumToVolEnvHold, keynumToVolEnvDecay, instrument
    case keyRange = 43, velRange, startloopAddrsCoarseOffset, keynum, velocity, initialAttenuation
    case endloopAddrsCoarseOffset = 50, coarseTune, fineTune, sampleID, sampleModes
    case scaleTuning = 56, exclusiveClass, overridingRootKey

    /// The value a voice starts from before any zone sets it.
    public var defaultValue: Int {
        switch self {
        case .initialFilterFc: 13_500
        case .delayModLFO, .delayVibLFO, .delayModEnv, .attackModEnv, .holdModEnv, .decayModEnv,
            .releaseModEnv, .delayVolEnv, .attackVolEnv, .holdVolEnv, .decayVolEnv, .releaseVolEnv:
            -12_000
        case .keyRange, .velRange: 127 << 8
        case .keynum, .velocity, .overridingRootKey: -1
        case .scaleTuning: 100
        default: 0
        }
    }

    /// Generators only an instrument zone may give (a preset's are dropped; section 8.1.3).
    public var isInstrumentOnly: Bool {
        switch self {
        case .startAddrsOffset, .endAddrsOffset, .startloopAddrsOffset, .endloopAddrsOffset,
            .startAddrsCoarseOffset, .endAddrsCoarseOffset, .startloopAddrsCoarseOffset,
            .endloopAddrsCoarseOffset, .keynum, .velocity, .sampleModes, .exclusiveClass, .overridingRootKey,
            .sampleID:
            true
        default: false
        }
    }
}

/// Random access to a font's bytes: the file itself (only the parts needed are read), or
/// bytes in memory (tests, fuzzing).
public struct SoundFontBytes: Sendable {
    /// Bytes in all.
    public var count: Int
    /// `length` bytes from `offset`, or nil if they cannot be read.
    public var read: @Sendable (_ offset: Int, _ length: Int) -> [UInt8]?

    public init(count: Int, read: @escaping @Sendable (_ offset: Int, _ length: Int) -> [UInt8]?) {
        self.count = count
        self.read = read
    }

    public init(_ bytes: [UInt8]) {
        count = bytes.count
        read = { offset, length in
            offset >= 0 && length >= 0 && offset <= bytes.count - length ? Array(bytes[offset..<offset + length]) : nil
        }
    }
}
