import BellkeysEngine
import BellkeysFormats
import BellkeysModel

/// A map file with its samples decoded, resampled and quantised: ready to play.
public struct LoadedInstrument: @unchecked Sendable {
    public var mapPath: String
    public var map: MapFile
    public var bank: SampleBank
    public var instrument: Instrument
    /// Output rate that the bank was prepared for.
    public var sampleRate: Int
    /// Per bank sample: resolved path, the file's own rate, whether its end was faded.
    public var samplePaths: [String]
    public var fileSampleRates: [Int]
    public var fadedEnds: [Bool]
    /// Seconds from reading the map to a ready bank.
    public var loadSeconds: Double
    /// The SFZ file's regions as read, when the map is an SFZ file.
    public var sfz: SFZInstrumentDescription?
    /// What the instrument asks for that bellkeys does not play (each once, with its place).
    public var warnings: [String] = []
    /// The SoundFont preset played, as "bank:program name", when the instrument is a SoundFont's.
    public var preset: String?
    /// The same preset for a person: `describePreset`'s words, with General MIDI's number.
    public var presetDescription: String?
    /// The preset asked for at load (`loadInstrument`'s `preset`), asked for again on a reload.
    public var requestedPreset: PresetChoice?
    /// The sets of a map of several (empty for one instrument), every one loaded into `bank`;
    /// `instrument` is then the first set's.
    public var sets: [InstrumentSet] = []
    /// The set every channel starts on (`--set`), in place of the map's starting sets.
    public var startingSet: Int?

    /// Whether the instrument is an SFZ file's.
    public var isSFZ: Bool { sfz != nil }
    /// Whether it is made of regions (an SFZ file's or a SoundFont preset's) rather than keys.
    public var hasRegions: Bool { sfz != nil || preset != nil }

    /// What it holds, for a start-up or reload line: "13 bells (C4..C5)", for an SFZ
    /// instrument "6 regions, 6 samples (G4..C7)", for a map of sets "3 sets (0 Handbells, ...)".
    public var contentsText: String {
        if !sets.isEmpty {
            return "\(sets.count) sets (" + sets.map { "\($0.program) \($0.name)" }.joined(separator: ", ") + ")"
        }
        return instrument.contentsText
    }

    /// The lowest and highest key that sounds.
    public var playableRange: ClosedRange<Int>? { instrument.playableRange }

    /// Whether any sample was resampled to `sampleRate`.
    public var resampled: Bool { fileSampleRates.contains { $0 != sampleRate } }
}

/// Reads and validates a map file (JSON, an SFZ file: a name ending in .sfz, or a SoundFont:
/// .sf2 or .sf3, whose `preset` is played) and preloads every sample it names (each file once;
/// of a SoundFont, only the preset's). Samples at another rate than `sampleRate` (default: the
/// first sample's rate) are resampled here, once (a SoundFont's are played at their own rate).
/// All problems are reported together. `preset` (else the map's `bank` and `program`) chooses
/// a SoundFont's preset. Thread: control.
public func loadInstrument(mapPath: String, sampleRate requested: Int? = nil, preset: PresetChoice? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    try loadInstrument(mapPath: mapPath, sampleRate: requested, preset: preset, shared: nil)
}

/// `loadInstrument`, a map's keys loaded into a map of sets' bank (`shared`; see `loadMap`).
func loadInstrument(mapPath: String, sampleRate requested: Int?, preset: PresetChoice?, shared: SharedKeySamples?)
    throws(InstrumentError) -> LoadedInstrument
{
    let start = monotonicSeconds()
    if mapPath.lowercased().hasSuffix(".sfz") {
        return try loadSFZInstrument(path: mapPath, sampleRate: requested, start: start)
    }
    if isSoundFontPath(mapPath) {
        var loaded = try loadSoundFontInstrument(path: mapPath, preset: preset, sampleRate: requested, start: start)
        loaded.requestedPreset = preset
        return loaded
    }
    let bytes: [UInt8]
    do {
        bytes = try readFile(mapPath, limit: 4 << 20, what: "map file")
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: mapPath, line: nil, column: nil, path: "",
                message: "cannot read the map file: \(error.message)", fix: error.fix)
        ])
    }
    if let problem = notAMap(bytes, path: mapPath) { throw InstrumentError([problem]) }
    let map = try parseMapFile(bytes, file: mapPath)
    if let preset, map.soundFont == nil {
        throw InstrumentError([
            InstrumentProblem(
                file: mapPath, line: nil, column: nil, path: "",
                message:
                    "--program \(preset.name ?? String(preset.program)) (bank \(preset.bank)) chooses a SoundFont's preset, and the map names no SoundFont",
                fix: "give a SoundFont as --map, or a map with \"soundfont\"; or leave --program and --bank out")
        ])
    }
    if !map.sets.isEmpty { return try loadSets(map, mapPath: mapPath, sampleRate: requested, start: start) }
    return try loadMap(map, mapPath: mapPath, sampleRate: requested, preset: preset, start: start, shared: shared)
}

/// What `--map` was given when it is no map, SFZ file or SoundFont but a file of another kind
/// (a MIDI file, a sound, a text that is not JSON), said as such with what `--map` takes; nil
/// for anything that may be a JSON map (its own parser judges it). Thread: any.
func notAMap(_ bytes: [UInt8], path: String) -> InstrumentProblem? {
    let takes = "--map takes a map (JSON, see man 5 bellkeys-map), an SFZ instrument (.sfz) or a SoundFont (.sf2, .sf3)"
    func problem(_ what: String, _ fix: String) -> InstrumentProblem {
        InstrumentProblem(file: path, line: nil, column: nil, path: "", message: what, fix: fix)
    }
    let name = path.split(separator: "/").last.map(String.init) ?? path
    switch FileContent(bytes) {
    case .json:
        return nil // a map, maybe: its own parser judges it
    case .midi:
        return problem(
            "this is a MIDI file (a tune), not a map; \(takes)",
            "to play the tune on the bells: bellkeys render \(path) -o out.wav (or play it into bellkeys live)")
    case .soundFont:
        return problem(
            "this is a SoundFont, but its name does not end in .sf2 or .sf3, so it was read as a JSON map",
            "rename it (or link it) to a name ending in .sf2: ln -s \(path) \(name).sf2")
    case .sound(let kind):
        return problem(
            "this is a sound (\(kind)), not a map; \(takes)",
            "to play this sound on a key, name it in a map: {\"keys\": [{\"note\": \"C4\", \"sample\": \"\(name)\"}]} (docs/map.md)"
        )
    case .otherRIFF, .text, .binary:
        // (An empty file, too: the JSON parser says so.)
        if bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) { return nil }
        return problem(
            "this is not a map: a map is a JSON object, starting with {; \(takes)",
            "give --map a map file (the bundled bells' tags.json is one to copy), an .sfz or an .sf2 file")
    }
}

/// The bank of a map of sets as its sets load, for a set of keys to load into: a file an earlier
/// set loaded as a key's sample (mono, as every key's) is not decoded again. Thread: control.
final class SharedKeySamples {
    let bank: SampleBank
    /// Resolved path: the bank's index of the file loaded as a key's sample.
    var files: [String: Int] = [:]
    init(bank: SampleBank) { self.bank = bank }
}

/// Loads what a parsed map of one instrument names (a set's own fields, too: `mapPath` is the
/// file they are in). A map of keys alone (no SFZ instrument or SoundFont) given `shared` loads
/// into its bank, decoding only the files it does not hold yet: the instrument's sample indices
/// are then the shared bank's, and the loaded lists (`samplePaths` and the rest) hold only the
/// samples it added (at the end of the bank). Thread: control.
func loadMap(
    _ map: MapFile, mapPath: String, sampleRate requested: Int?, preset: PresetChoice?, start: Double,
    shared: SharedKeySamples? = nil
) throws(InstrumentError) -> LoadedInstrument {
    let folder = directoryName(mapPath)

    // A map that names an instrument (an SFZ file or a SoundFont's preset): its regions
    // first, the map's keys beside them. `field`'s file, found beside the map.
    func named(_ file: String, field: String) throws(InstrumentError) -> String {
        try findNamedFile(
            file, folder: folder, mapPath: mapPath, line: map.instrumentLine, column: map.instrumentColumn,
            path: map.jsonPath.isEmpty ? field : map.jsonPath + "." + field)
    }
    var base: LoadedInstrument?
    if let file = map.instrument {
        let found = try named(file, field: "instrument")
        base = try loadSFZInstrument(path: found, sampleRate: requested, start: start, overriding: map)
    }
    if let file = map.soundFont {
        let found = try named(file, field: "soundfont")
        // The same rule as --map FONT: neither bank nor program given, the font's first preset.
        let given = map.givenFields.contains("bank") || map.givenFields.contains("program")
        let choice = preset ?? (given ? PresetChoice(bank: map.bank, program: map.program) : nil)
        base = try loadSoundFontInstrument(
            path: found, preset: choice, sampleRate: requested, start: start, overriding: map)
    }

    let sharing = base == nil ? shared : nil
    let keyPaths = map.keys.map { resolve($0.sample, from: folder) }
    let rate =
        base?.sampleRate ?? sharing?.bank.sampleRate ?? requested ?? firstSampleRate(keyPaths) ?? 48_000
    let bank = base?.bank ?? sharing?.bank ?? SampleBank(sampleRate: rate)
    // Each file once, in the order the keys name them (not one the shared bank holds); decoded
    // side by side, stored in order.
    var requests: [SampleRequest] = [], firstKey: [MapKey] = []
    var indexForPath: [String: Int] = [:]
    for (key, path) in zip(map.keys, keyPaths) where indexForPath[path] == nil {
        if let held = sharing?.files[path] {
            indexForPath[path] = held
            continue
        }
        indexForPath[path] = -1
        requests.append(SampleRequest(path: path))
        firstKey.append(key)
    }
    var paths: [String] = base?.samplePaths ?? [], loaded: [LoadedSample] = []
    var problems: [InstrumentProblem] = []
    for (k, result) in loadSamples(requests, into: bank).enumerated() {
        switch result {
        case .success(let sample):
            indexForPath[requests[k].path] = sample.index
            sharing?.files[requests[k].path] = sample.index
            paths.append(requests[k].path)
            loaded.append(sample)
        case .failure(let error):
            let key = firstKey[k], path = requests[k].path
            let shown = path == key.sample ? "\"\(key.sample)\"" : "\"\(key.sample)\" (\(path))"
            problems.append(
                InstrumentProblem(
                    file: mapPath, line: key.sampleLine, column: key.sampleColumn,
                    path: key.path + ".sample", message: "\(shown): \(error.message)",
                    fix: error.fix))
        }
    }
    let sampleIndexForKey = keyPaths.map { indexForPath[$0]! }
    if !problems.isEmpty { throw InstrumentError(problems) }

    var instrument = map.instrument(sampleIndexForKey: sampleIndexForKey)
    if let base {
        instrument.regions += base.instrument.regions
        instrument.keyswitchRange = base.instrument.keyswitchRange
        instrument.defaultKeyswitch = base.instrument.defaultKeyswitch
        instrument.controllerDefaults = base.instrument.controllerDefaults
        instrument.followsPanController = instrument.followsPanController || base.instrument.followsPanController
        instrument.restrikeReleases = base.instrument.restrikeReleases
        instrument.chokesWithinChannel = base.instrument.chokesWithinChannel
    }
    return LoadedInstrument(
        mapPath: mapPath, map: map, bank: bank,
        instrument: instrument, sampleRate: rate,
        samplePaths: paths, fileSampleRates: (base?.fileSampleRates ?? []) + loaded.map(\.fileSampleRate),
        fadedEnds: (base?.fadedEnds ?? []) + loaded.map(\.fadedEnd),
        loadSeconds: monotonicSeconds() - start, sfz: base?.sfz, warnings: base?.warnings ?? [], preset: base?.preset,
        requestedPreset: preset)
}
