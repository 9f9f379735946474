import BellkeysModel

// What a map file holds once read (MapFile.swift reads it).

/// A key of the map file, with the sample path still unresolved.
public struct MapKey: Sendable {
    /// MIDI note number.
    public var note: Int
    /// The tutorial tag the key was given by, if it was.
    public var tag: Int?
    /// Sample file path as written (relative paths are relative to the map file's folder).
    public var sample: String
    /// JSON path of the key (`keys[3]`) and position of its `sample` value, for load errors.
    public var path: String
    public var sampleLine: Int
    public var sampleColumn: Int
    public var gainDecibels: Double
    public var noteOff: NoteOffMode
    public var chokeGroup: Int
    /// Where the bell stands, -1 (left) to 1 (right); 0 is the centre (see `panGains`).
    public var pan: Double = 0
}

/// One set of a map of several (`MapFile.sets`): its name, the program (and bank) that
/// choose it, the channels it starts on, and its instrument: its own fields (`map`) or a file
/// (`file`: a map, an SFZ file or a SoundFont, relative to the map's folder).
public struct MapSet: Sendable {
    public var name: String
    public var program: Int
    public var bank: Int?
    /// MIDI channels 0...15 that start on this set.
    public var channels: [Int]
    public var map: MapFile?
    public var file: String?
    /// A SoundFont's preset (`preset`; else the set's own bank and program).
    public var presetBank: Int
    public var presetProgram: Int
    /// JSON path (`sets[2]`) and position of the set, for load errors.
    public var path: String
    public var line: Int
    public var column: Int
}

/// A validated map file.
public struct MapFile: Sendable {
    public var masterVolumeDecibels: Double
    public var velocityCurve: VelocityCurve
    public var polyphony: Int
    public var unmappedNotes: UnmappedNotes
    /// The room: `reverb` (a preset) and `reverbMix`.
    public var reverb = ReverbSettings(preset: .off)
    /// `velocityTimbre`, 0 to 1 (see `Instrument.velocityTimbre`).
    public var velocityTimbre: Double = 0
    /// `pitchBend`: whether MIDI pitch bend bends the bells (see `Instrument.followsPitchBend`).
    public var pitchBend = false
    /// `instrument`: an SFZ file whose regions the map plays (its path as written, relative to
    /// the map's folder), and where the value is, for load errors.
    public var instrument: String?
    public var instrumentLine = 0, instrumentColumn = 0
    /// `soundfont`: a SoundFont (.sf2 or .sf3) whose preset `bank`, `program` the map plays.
    public var soundFont: String?
    public var bank = 0
    public var program = 0
    /// `quality`: how transposed samples are interpolated (nil: the default, or `--quality`).
    public var quality: InterpolationQuality?
    /// `transpose`: semitones that notes from MIDI inputs move by (`EngineConfiguration.transpose`).
    public var transpose = 0
    /// The fields the map gave at its top level (a given field replaces an instrument's own
    /// value for every region: `releaseSeconds`, `noteOff`, `velocityCurve`, `pitchBend`).
    public var givenFields: Set<String> = []
    /// The top-level `noteOff` and `releaseSeconds` (what a key that says neither does).
    public var defaultNoteOff = NoteOffMode.ring
    public var defaultReleaseSeconds = MapFile.defaultReleaseSeconds
    /// Keys in file order.
    public var keys: [MapKey]
    /// `sets`: the sets of a map of several (empty for a map of one instrument), in file order;
    /// the first is every channel's starting set unless a set names the channel.
    public var sets: [MapSet] = []
    /// Where these fields are in their file: empty for a map, `sets[2]` for a set's own.
    public var jsonPath = ""

    /// A map's settings when the instrument comes from elsewhere (an SFZ file): every default,
    /// no keys.
    public static let instrumentDefaults = MapFile(
        masterVolumeDecibels: 0, velocityCurve: .square, polyphony: defaultPolyphony, unmappedNotes: .ignore,
        keys: [])

    public static let defaultPolyphony = 128
    public static let defaultReleaseSeconds = 0.15
    public static let polyphonyRange = 1...65_536
    public static let transposeRange = -48...48
    /// At least 5 ms: a shorter fade of a ringing bell is a click.
    public static let releaseRange = 0.005...10.0
    public static let chokeGroupRange = 0...127
    public static let panRange = -1.0...1.0
    public static let reverbMixRange = 0.0...1.0
    public static let velocityTimbreRange = 0.0...1.0
    /// SoundFont banks (FluidSynth's drum kits are bank 128) and programs as sent on the wire.
    public static let bankRange = 0...16_383
    public static let programRange = 0...127
    /// Sets in a map of several: one per program number.
    public static let maximumSets = 128
}

extension MapFile {
    /// The instrument this map describes, given the bank index of each key's sample.
    public func instrument(sampleIndexForKey: [Int]) -> Instrument {
        precondition(sampleIndexForKey.count == keys.count)
        let settings = keys.enumerated().map { i, key in
            let (left, right) = panGains(key.pan)
            return KeySettings(
                note: key.note, sampleIndex: sampleIndexForKey[i],
                gain: linearGain(decibels: key.gainDecibels), noteOff: key.noteOff,
                chokeGroup: key.chokeGroup, leftGain: left, rightGain: right)
        }
        var instrument = Instrument(
            keys: settings, velocityCurve: velocityCurve, unmappedNotes: unmappedNotes,
            masterVolumeDecibels: masterVolumeDecibels, reverb: reverb)
        instrument.velocityTimbre = velocityTimbre
        instrument.followsPanController = keys.contains { $0.pan != 0 }
        instrument.followsPitchBend = pitchBend
        return instrument
    }
}
