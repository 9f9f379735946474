import BellkeysFormats
import BellkeysModel
import BellkeysSystem

extension LoadedInstrument {
    /// What an engine plays: the sets (each channel starting on the set the map gives it, or
    /// every channel on `startingSet` when it is chosen), or the one instrument, which ignores
    /// program change.
    public var instrumentSets: InstrumentSets {
        guard !sets.isEmpty else { return InstrumentSets(instrument) }
        if wholeFont {
            var whole = InstrumentSets(soundFontPresets: sets)
            if let startingSet { whole.startingSets = [Int](repeating: startingSet, count: 16) }
            return whole
        }
        var starting: [Int: Int] = [:]
        if startingSet == nil {
            for (k, set) in sets.enumerated() { for channel in set.channels { starting[channel] = k } }
        }
        return InstrumentSets(sets: sets, startingSet: startingSet ?? 0, startingSets: starting)
    }

    /// The master volume an engine of it starts at: the instrument's, or channel 1's starting
    /// set's (the engine's master; see `Engine.init(bank:sets:configuration:)`).
    public var startingVolumeDecibels: Double {
        let sets = instrumentSets
        return sets.sets[sets.startingSets[0]].instrument.masterVolumeDecibels
    }

    /// A bank select (CC0 × 128 + CC32) that, before a program change to `set`'s program,
    /// chooses it: its own bank, or, for a set of any bank, one that no set of the same program
    /// has (the first). A whole font's bank is CC0 alone (`ProgramSelection.soundFont`).
    public func bankChoosing(set: Int) -> Int {
        if wholeFont { return (sets[set].bank ?? 0) << 7 }
        if let bank = sets[set].bank { return bank }
        let taken = Set(sets.filter { $0.program == sets[set].program }.compactMap(\.bank))
        return (0...16_383).first { !taken.contains($0) } ?? 0
    }

    /// The set after `set` that a program change on `channel` can choose, round the list: any
    /// set, but in a whole font the drum kits only on the drum channel and only there (nil: none).
    public func nextSet(after set: Int, channel: Int) -> Int? {
        let drums = wholeFont && instrumentSets.drumChannel == channel
        let reachable = { (k: Int) in !self.wholeFont || (self.sets[k].bank == 128) == drums }
        return (1...sets.count).map { (set + $0) % sets.count }.first(where: reachable)
    }

    /// The set called `name` (any case), if there is one.
    public func setIndex(named name: String) -> Int? {
        sets.firstIndex { $0.name.lowercased() == name.lowercased() }
    }
}

/// Loads every set of a map of several into one bank (`SharedBank`), at one rate (the first
/// set's, unless `requested`): a set's own fields as a map's, or the file it names (a map of
/// one instrument, an SFZ file or a SoundFont, whose preset is the set's). Problems of every
/// set are reported together. Thread: control.
func loadSets(_ map: MapFile, mapPath: String, sampleRate requested: Int?, start: Double)
    throws(InstrumentError) -> LoadedInstrument
{
    var rate = requested
    var problems: [InstrumentProblem] = [], warnings: [String] = []
    var loadedSets: [InstrumentSet] = []
    let shared = SharedBank()
    for set in map.sets {
        do throws(InstrumentError) {
            let part = try load(
                readSet(set, mapPath: mapPath, files: .disk), sampleRate: rate, start: start, shared: shared)
            rate = rate ?? part.sampleRate
            loadedSets.append(InstrumentSet(set, of: map, playing: shared.take(part), preset: part.preset))
            warnings += part.warnings.map { "\(set.name): \($0)" }
        } catch {
            problems += error.problems
        }
    }
    if !problems.isEmpty { throw InstrumentError(foldingRepeats(problems)) }
    if let problem = tooManyRooms(loadedSets, mapPath: mapPath) { throw InstrumentError([problem]) }
    var loaded = LoadedInstrument(
        path: mapPath, map: map, bank: shared.bank!, instrument: loadedSets[0].instrument,
        sampleRate: shared.bank!.sampleRate, samplePaths: shared.samplePaths, fileSampleRates: shared.fileSampleRates,
        fadedEnds: shared.fadedEnds, loadSeconds: monotonicSeconds() - start, sfz: nil, warnings: warnings)
    loaded.sets = loadedSets
    return loaded
}

/// The one bank of a map of sets as its sets load: a sample file that two sets play (the
/// bundled bells as handbells and as a tower) is kept once. A set of keys loads into it
/// (`loadMap`), decoding only the files no set of keys before it stored (`keyFiles`); an SFZ
/// instrument or a SoundFont loads into a bank of its own, which `take` merges into this one
/// as soon as it loads, freeing its copies of files already held before the next set loads.
/// (A SoundFont's samples, named FONT#sample, are each set's own: a zone's offsets may have
/// cut a copy of one.) Thread: control.
final class SharedBank {
    /// The bank: the first set's, holding every set's samples once taken.
    private(set) var bank: SampleBank?
    /// Files stored as a key's sample (mono), by resolved path: a later set of keys takes them.
    /// (Only a set taken fills it: after a set fails, a later one decodes its files again, and
    /// `loadSets` throws in the end anyway.)
    private(set) var keyFiles: [String: Int] = [:]
    /// Per sample of the bank: resolved path, the file's own rate, whether its end was faded.
    private(set) var samplePaths: [String] = [], fileSampleRates: [Int] = [], fadedEnds: [Bool] = []
    /// "channels fadedEnd path" of each file the bank holds: the same file stored alike (a map's
    /// keys store a stereo file mixed down, an SFZ file's regions keep it stereo).
    private var indexOfFile: [String: Int] = [:]

    /// Takes a set just loaded into the bank; returns its instrument, playing the bank's indices.
    /// A set of keys loaded into the bank itself is there already: its samples are the bank's
    /// last. (A set that failed to load may have left samples in the bank that the lists lack:
    /// `loadSets` then throws, and nothing reads them.)
    func take(_ part: LoadedInstrument) -> Instrument {
        var instrument = part.instrument
        let inPlace = bank != nil && part.bank === bank
        let first = inPlace ? part.bank.count - part.samplePaths.count : 0
        let files = part.samplePaths.indices.map { i -> String? in
            let path = part.samplePaths[i]
            if path.contains("#") { return nil }
            return "\(part.bank.channelCounts[first + i]) \(part.fadedEnds[i]) \(path)"
        }
        var indices = Array(first..<first + part.samplePaths.count)
        if inPlace {
            // (Nothing to move.)
        } else if let bank {
            indices = bank.absorb(part.bank, reusing: files.map { $0.flatMap { indexOfFile[$0] } })
            for i in instrument.regions.indices {
                instrument.regions[i].sampleIndex = indices[instrument.regions[i].sampleIndex]
            }
        } else {
            bank = part.bank
        }
        let keysOnly = part.sfz == nil && part.preset == nil
        for (i, file) in files.enumerated() where indices[i] == samplePaths.count {
            if let file { indexOfFile[file] = indices[i] }
            if keysOnly { keyFiles[part.samplePaths[i]] = indices[i] }
            samplePaths.append(part.samplePaths[i])
            fileSampleRates.append(part.fileSampleRates[i])
            fadedEnds.append(part.fadedEnds[i])
        }
        return instrument
    }
}

/// Problems alike but for where they stand (five sets naming one SoundFont that is not
/// installed) as one, at the first place, naming the others: the fix is said once.
func foldingRepeats(_ problems: [InstrumentProblem]) -> [InstrumentProblem] {
    var folded: [InstrumentProblem] = [], others: [[String]] = []
    for problem in problems {
        if let i = folded.firstIndex(where: {
            $0.file == problem.file && $0.byte == problem.byte && $0.message == problem.message && $0.fix == problem.fix
        }) {
            others[i].append(problem.path + (problem.line.map { " (line \($0))" } ?? ""))
        } else {
            folded.append(problem)
            others.append([])
        }
    }
    for i in folded.indices where !others[i].isEmpty {
        folded[i].message += "; the same in " + others[i].joined(separator: ", ")
    }
    return folded
}
