import BellkeysModel

// The first half of loading any instrument file: what it is, told by its name and, for a JSON
// map, read, checked and compiled, before any sample is read. BellkeysLoading's loader then stores
// the samples and finishes the instrument (CompiledMap.instrument, CompiledSFZ.instrument,
// CompiledSoundFont.instrument).

/// An instrument a map names, or that `--map` is: an SFZ file, or a SoundFont with the preset
/// to play (nil: the font's first). Paths are as found. Thread: any.
public enum NamedInstrument: Sendable, Equatable {
    case sfz(path: String)
    case soundFont(path: String, preset: PresetChoice?)
}

/// One instrument to load: a file of its own kind, or a map (or a set's own fields) compiled.
public enum InstrumentSource: Sendable {
    case named(NamedInstrument)
    case map(CompiledMap)
}

/// A file given as `--map`: one instrument, or a map of sets (each read with `readSet`).
public enum InstrumentFile: Sendable {
    case one(InstrumentSource)
    case sets(MapFile)
}

/// Reads what `path` is: an SFZ file (a name ending in .sfz) or a SoundFont (.sf2, .sf3) by its
/// name; any other file is read as a JSON map (refused with words when it is a file of another
/// kind, see `notAMap`) and compiled. `preset` (`--program`) chooses a SoundFont's preset, and
/// is refused for a map that names no SoundFont. Thread: any.
public func readInstrumentFile(path: String, files: FileFinder, preset: PresetChoice?) throws(InstrumentError)
    -> InstrumentFile
{
    if path.lowercased().hasSuffix(".sfz") { return .one(.named(.sfz(path: path))) }
    if isSoundFontPath(path) { return .one(.named(.soundFont(path: path, preset: preset))) }
    let bytes: [UInt8]
    do {
        bytes = try files.read(path, 4 << 20, "map file")
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: path, line: nil, column: nil, path: "",
                message: "cannot read the map file: \(error.message)", fix: error.fix)
        ])
    }
    if let problem = notAMap(bytes, path: path) { throw InstrumentError([problem]) }
    let map = try parseMapFile(bytes, file: path)
    if let preset, map.soundFont == nil {
        throw InstrumentError([
            InstrumentProblem(
                file: path, line: nil, column: nil, path: "",
                message:
                    "--program \(preset.name ?? String(preset.program)) (bank \(preset.bank)) chooses a SoundFont's preset, and the map names no SoundFont",
                fix: "give a SoundFont as --map, or a map with \"soundfont\"; or leave --program and --bank out")
        ])
    }
    if !map.sets.isEmpty { return .sets(map) }
    return .one(.map(try compileMap(map, mapPath: path, files: files, preset: preset)))
}

/// One set of the map of sets at `mapPath`: its own fields compiled, or the file it names
/// (found beside the map in any case; a SoundFont plays the set's preset). A file that is a
/// map of sets itself is refused (a map naming itself, or two naming each other, would load
/// for ever). Thread: any.
public func readSet(_ set: MapSet, mapPath: String, files: FileFinder) throws(InstrumentError) -> InstrumentSource {
    guard let file = set.file else {
        return .map(try compileMap(set.map!, mapPath: mapPath, files: files, preset: nil))
    }
    let found = try findNamedFile(
        file, folder: directoryName(mapPath), mapPath: mapPath, line: set.line, column: set.column,
        path: set.path + ".map", files: files)
    let preset = isSoundFontPath(found) ? PresetChoice(bank: set.presetBank, program: set.presetProgram) : nil
    switch try readInstrumentFile(path: found, files: files, preset: preset) {
    case .one(let source):
        return source
    case .sets:
        throw InstrumentError([
            InstrumentProblem(
                file: mapPath, line: set.line, column: set.column, path: set.path + ".map",
                message: "\"\(file)\" is a map of sets itself",
                fix: "name a map of one instrument (an SFZ file or a SoundFont will do), or give its sets here")
        ])
    }
}

extension InstrumentSet {
    /// `set` of the map of sets `map`, playing `instrument` (the set loaded, its sample indices
    /// the shared bank's) at the map's master volume added to its own; `preset` is the SoundFont
    /// preset it plays.
    public init(_ set: MapSet, of map: MapFile, playing instrument: Instrument, preset: String?) {
        var instrument = instrument
        instrument.masterVolumeDecibels += map.masterVolumeDecibels
        self.init(
            name: set.name, program: set.program, bank: set.bank, channels: set.channels, instrument: instrument,
            preset: preset)
    }
}

/// The problem of the map of sets at `mapPath` when its sets ring in more rooms (reverb and
/// reverbMix) than an engine holds (`InstrumentSets.maximumRooms`); nil when they fit.
public func tooManyRooms(_ sets: [InstrumentSet], mapPath: String) -> InstrumentProblem? {
    var rooms: [ReverbSettings] = []
    for set in sets where !rooms.contains(set.instrument.reverb.asRoom) { rooms.append(set.instrument.reverb.asRoom) }
    guard rooms.count > InstrumentSets.maximumRooms else { return nil }
    return InstrumentProblem(
        file: mapPath, line: nil, column: nil, path: "sets",
        message:
            "the sets ring in \(rooms.count) different rooms (reverb and reverbMix), more than the \(InstrumentSets.maximumRooms) bellkeys holds at once",
        fix: "let some sets share a room: give them the same reverb and reverbMix")
}

/// A map of one instrument (or a set's own fields) compiled: the instrument it names, found,
/// and its keys' sample files, each once. Thread: any.
public struct CompiledMap: Sendable {
    public var map: MapFile
    /// The file the fields are in (a set's own fields: the map of sets).
    public var mapPath: String
    /// The SFZ file or SoundFont the map plays beside its keys (its regions after theirs).
    public var named: NamedInstrument?
    /// `--program` as given at load (asked for again on a reload).
    public var requestedPreset: PresetChoice?
    /// Each key's sample, resolved from the map's folder (not looked up: a missing file is the
    /// decoder's to report, with its "did you mean").
    public var keyPaths: [String]
    /// Each key's file once, in the order the keys first name it, mixed down as a bell's.
    public var samples: [SampleRequest]
    /// For each key, its file's index in `samples`; for each of `samples`, the first key naming it.
    public var sampleOfKey: [Int]
    public var firstKeyOfSample: [Int]

    /// The problem to report when `samples[k]` fails to load: at the first key naming it.
    public func problem(sample k: Int, _ error: SampleError) -> InstrumentProblem {
        let key = map.keys[firstKeyOfSample[k]], path = samples[k].path
        let shown = path == key.sample ? "\"\(key.sample)\"" : "\"\(key.sample)\" (\(path))"
        return InstrumentProblem(
            file: mapPath, line: key.sampleLine, column: key.sampleColumn,
            path: key.path + ".sample", message: "\(shown): \(error.message)", fix: error.fix)
    }

    /// The instrument: the keys as regions playing the bank's `bankIndex[k]` for `samples[k]`,
    /// then the named instrument's regions (`base`), whose switches and controllers it keeps.
    public func instrument(bankIndex: [Int], base: Instrument?) -> Instrument {
        precondition(bankIndex.count == samples.count)
        var instrument = map.instrument(sampleIndexForKey: sampleOfKey.map { bankIndex[$0] })
        if let base {
            instrument.regions += base.regions
            instrument.keyswitchRange = base.keyswitchRange
            instrument.defaultKeyswitch = base.defaultKeyswitch
            instrument.controllerDefaults = base.controllerDefaults
            instrument.followsPanController = instrument.followsPanController || base.followsPanController
            instrument.restrikeReleases = base.restrikeReleases
            instrument.chokesWithinChannel = base.chokesWithinChannel
            instrument.pitchBendReach = base.pitchBendReach
            // A font's CC91 law, unless the map has keys of its own: those keep a map's (from 127).
            instrument.linearReverbSend = base.linearReverbSend && map.keys.isEmpty
        }
        return instrument
    }
}

/// Compiles a parsed map of one instrument (a set's own fields, too: `mapPath` is the file
/// they are in): the SFZ file or SoundFont it names, found beside it, and its keys' files.
/// `preset` (`--program`), else the map's `bank` and `program` when it gives either, chooses
/// the SoundFont's preset, as for `--map FONT`; with neither, the map plays the whole font
/// (and may then have no keys). Thread: any.
public func compileMap(_ map: MapFile, mapPath: String, files: FileFinder, preset: PresetChoice?)
    throws(InstrumentError) -> CompiledMap
{
    let folder = directoryName(mapPath)
    func named(_ file: String, field: String) throws(InstrumentError) -> String {
        try findNamedFile(
            file, folder: folder, mapPath: mapPath, line: map.instrumentLine, column: map.instrumentColumn,
            path: map.jsonPath.isEmpty ? field : map.jsonPath + "." + field, files: files)
    }
    var instrument: NamedInstrument?
    if let file = map.instrument { instrument = .sfz(path: try named(file, field: "instrument")) }
    if let file = map.soundFont {
        let given = map.givenFields.contains("bank") || map.givenFields.contains("program")
        let choice = preset ?? (given ? PresetChoice(bank: map.bank, program: map.program) : nil)
        instrument = .soundFont(path: try named(file, field: "soundfont"), preset: choice)
        if choice == nil, !map.keys.isEmpty {
            throw InstrumentError([
                InstrumentProblem(
                    file: mapPath, line: map.instrumentLine, column: map.instrumentColumn,
                    path: map.jsonPath.isEmpty ? "soundfont" : map.jsonPath + ".soundfont",
                    message: "the map plays keys beside the whole font, whose presets program changes choose",
                    fix: "give \"program\" (and \"bank\") to play one preset beside the keys, or leave the keys out")
            ])
        }
    }
    let keyPaths = map.keys.map { resolve($0.sample, from: folder) }
    var samples: [SampleRequest] = [], sampleOfKey: [Int] = [], firstKeyOfSample: [Int] = []
    var sampleOfPath: [String: Int] = [:]
    for (k, path) in keyPaths.enumerated() {
        if let known = sampleOfPath[path] {
            sampleOfKey.append(known)
            continue
        }
        sampleOfPath[path] = samples.count
        sampleOfKey.append(samples.count)
        firstKeyOfSample.append(k)
        samples.append(SampleRequest(path: path))
    }
    return CompiledMap(
        map: map, mapPath: mapPath, named: instrument, requestedPreset: preset, keyPaths: keyPaths, samples: samples,
        sampleOfKey: sampleOfKey, firstKeyOfSample: firstKeyOfSample)
}

/// The file a map names (`file`, relative to the map's `folder`), found in any case; else
/// the problem at `line`, `column` and JSON `path` of `mapPath`, with the fix. Thread: any.
func findNamedFile(
    _ file: String, folder: String, mapPath: String, line: Int, column: Int, path field: String, files: FileFinder
) throws(InstrumentError) -> String {
    let path = resolve(file, from: folder)
    guard let found = files.find(path) else {
        throw InstrumentError([
            InstrumentProblem(
                file: mapPath, line: line, column: column, path: field,
                message: "\"\(file)\" (\(path)): no such file", fix: missingFileFix(path))
        ])
    }
    return found
}

/// The Debian packages that ship the SoundFonts maps name (the bundled gm-bells.json names
/// FluidR3_GM.sf2), by file name.
let soundFontPackages = [
    "FluidR3_GM.sf2": "fluid-soundfont-gm", "FluidR3_GS.sf2": "fluid-soundfont-gs",
    "MuseScore_General.sf3": "musescore-general-soundfont",
    "MuseScore_General_Lite.sf3": "musescore-general-soundfont-small",
    "TimGM6mb.sf2": "timgm6mb-soundfont",
]

/// How to mend a file a map names that is not there: install the package that ships it, if
/// it is a SoundFont Debian packages, else check the name.
func missingFileFix(_ path: String) -> String {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    if let package = soundFontPackages[name] {
        return "install the SoundFont: sudo apt install \(package) (it puts \(name) in /usr/share/sounds)"
    }
    return "check the name; it is relative to the map file's folder"
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
