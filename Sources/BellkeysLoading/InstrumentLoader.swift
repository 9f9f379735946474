import BellkeysFormats
import BellkeysModel
import BellkeysSystem

/// An instrument file (a JSON map, an SFZ file or a SoundFont preset) with its samples
/// decoded, resampled and quantised: ready to play.
public struct LoadedInstrument: @unchecked Sendable {
    /// The file `--map` named (a JSON map, an SFZ file, a SoundFont), which a reload reads again.
    public var path: String
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
    /// Whether the sets are a whole SoundFont's presets, chosen as FluidSynth chooses them
    /// (`ProgramSelection.soundFont`).
    public var wholeFont = false
    /// A whole font's: what each preset asks for that bellkeys leaves out, a line each
    /// (`warnings` then says only how many presets do).
    public var presetWarnings: [String] = []

    /// Whether the instrument is an SFZ file's.
    public var isSFZ: Bool { sfz != nil }
    /// Whether it is made of regions (an SFZ file's or a SoundFont preset's) rather than keys.
    public var hasRegions: Bool { sfz != nil || preset != nil }

    /// What it holds, for a start-up or reload line: "13 bells (C4..C5)", for an SFZ
    /// instrument "6 regions, 6 samples (G4..C7)", for a map of sets "3 sets (0 Handbells, ...)".
    public var contentsText: String {
        if wholeFont {
            let kits = sets.filter { $0.bank == 128 }.count
            return "\(sets.count) presets"
                + (kits > 0 ? " (\(kits) drum kit\(kits == 1 ? "" : "s") on channel 10)" : "")
                + ", chosen by program change"
        }
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
public func loadInstrument(path: String, sampleRate requested: Int? = nil, preset: PresetChoice? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    let start = monotonicSeconds()
    switch try readInstrumentFile(path: path, files: .disk, preset: preset) {
    case .one(let source): return try load(source, sampleRate: requested, start: start, shared: nil)
    case .sets(let map): return try loadSets(map, mapPath: path, sampleRate: requested, start: start)
    }
}

/// Loads one instrument, read as far as `readInstrumentFile` or `readSet` reads it: its samples
/// stored, its regions made. Thread: control.
func load(_ source: InstrumentSource, sampleRate requested: Int?, start: Double, shared: SharedBank?)
    throws(InstrumentError) -> LoadedInstrument
{
    switch source {
    case .named(.sfz(let path)):
        return try loadSFZInstrument(path: path, sampleRate: requested, start: start)
    case .named(.soundFont(let path, nil)):
        return try loadWholeSoundFont(path: path, sampleRate: requested, start: start)
    case .named(.soundFont(let path, let preset)):
        var loaded = try loadSoundFontInstrument(path: path, preset: preset, sampleRate: requested, start: start)
        loaded.requestedPreset = preset
        return loaded
    case .map(let compiled):
        return try loadMap(compiled, sampleRate: requested, start: start, shared: shared)
    }
}

/// Loads what a compiled map of one instrument names: the SFZ file or SoundFont first, then the
/// keys' samples. A map of keys alone given `shared` loads into its bank, decoding only the
/// files it does not hold yet: the instrument's sample indices are then the shared bank's, and
/// the loaded lists (`samplePaths` and the rest) hold only the samples it added (at the end of
/// the bank). Thread: control.
func loadMap(_ compiled: CompiledMap, sampleRate requested: Int?, start: Double, shared: SharedBank? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    let map = compiled.map
    var base: LoadedInstrument?
    switch compiled.named {
    case .soundFont(let path, nil):
        return try loadWholeSoundFont(path: path, sampleRate: requested, start: start, map: compiled)
    case .sfz(let path):
        base = try loadSFZInstrument(path: path, sampleRate: requested, start: start, overriding: map)
    case .soundFont(let path, let preset):
        base = try loadSoundFontInstrument(
            path: path, preset: preset, sampleRate: requested, start: start, overriding: map)
    case nil:
        break
    }
    let sharing = base == nil ? shared : nil
    let rate =
        base?.sampleRate ?? sharing?.bank?.sampleRate ?? requested ?? firstSampleRate(compiled.keyPaths) ?? 48_000
    let bank = base?.bank ?? sharing?.bank ?? SampleBank(sampleRate: rate)
    // The files the shared bank does not hold yet: decoded side by side, stored in order.
    var bankIndex = [Int](repeating: -1, count: compiled.samples.count)
    var wanted: [Int] = []
    for (k, request) in compiled.samples.enumerated() {
        if let held = sharing?.keyFiles[request.path] { bankIndex[k] = held } else { wanted.append(k) }
    }
    var paths: [String] = base?.samplePaths ?? [], loaded: [LoadedSample] = []
    var problems: [InstrumentProblem] = []
    for (k, result) in zip(wanted, loadSamples(wanted.map { compiled.samples[$0] }, into: bank)) {
        switch result {
        case .success(let sample):
            bankIndex[k] = sample.index
            paths.append(compiled.samples[k].path)
            loaded.append(sample)
        case .failure(let error):
            problems.append(compiled.problem(sample: k, error))
        }
    }
    if !problems.isEmpty { throw InstrumentError(problems) }
    return LoadedInstrument(
        path: compiled.mapPath, map: map, bank: bank,
        instrument: compiled.instrument(bankIndex: bankIndex, base: base?.instrument), sampleRate: rate,
        samplePaths: paths, fileSampleRates: (base?.fileSampleRates ?? []) + loaded.map(\.fileSampleRate),
        fadedEnds: (base?.fadedEnds ?? []) + loaded.map(\.fadedEnd),
        loadSeconds: monotonicSeconds() - start, sfz: base?.sfz, warnings: base?.warnings ?? [], preset: base?.preset,
        requestedPreset: compiled.requestedPreset)
}
