import BellkeysEngine
import BellkeysFormats
import BellkeysModel

extension LoadedInstrument {
    /// What an engine plays: the sets (each channel starting on the set the map gives it, or
    /// every channel on `startingSet` when it is chosen), or the one instrument, which ignores
    /// program change.
    public var instrumentSets: InstrumentSets {
        guard !sets.isEmpty else { return InstrumentSets(instrument) }
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

    /// A bank select that, before a program change to `set`'s program, chooses it: its own
    /// bank, or, for a set of any bank, one that no set of the same program has (the first).
    public func bankChoosing(set: Int) -> Int {
        if let bank = sets[set].bank { return bank }
        let taken = Set(sets.filter { $0.program == sets[set].program }.compactMap(\.bank))
        return (0...16_383).first { !taken.contains($0) } ?? 0
    }

    /// The set called `name` (any case), if there is one.
    public func setIndex(named name: String) -> Int? {
        sets.firstIndex { $0.name.lowercased() == name.lowercased() }
    }
}

/// Loads every set of a map of several into one bank, at one rate (the first set's, unless
/// `requested`): a set's own fields as a map's, or the file it names (a map of one
/// instrument, an SFZ file or a SoundFont, whose preset is the set's). Problems of every set
/// are reported together. Thread: control.
func loadSets(_ map: MapFile, mapPath: String, sampleRate requested: Int?, start: Double)
    throws(InstrumentError) -> LoadedInstrument
{
    var rate = requested
    var problems: [InstrumentProblem] = []
    // One bank: a sample file that two sets play (the bundled bells as handbells and as a
    // tower) is kept once. A set of keys loads into it (`SharedKeySamples`), decoding only the
    // files no set of keys before it loaded; an SFZ instrument or a SoundFont loads into its own
    // bank, merged into the one as soon as it loads, its copies of files already held freed
    // before the next set loads. (A SoundFont's samples, named FONT#sample, are each set's own:
    // a zone's offsets may have cut a copy of one.)
    var bank: SampleBank?
    var shared: SharedKeySamples?
    var loadedSets: [InstrumentSet] = [], rooms: [ReverbSettings] = []
    var samplePaths: [String] = [], fileRates: [Int] = [], fadedEnds: [Bool] = [], warnings: [String] = []
    var indexOfFile: [String: Int] = [:]
    func merge(_ set: MapSet, _ part: LoadedInstrument) {
        var instrument = part.instrument
        // A set of keys loaded into the shared bank: its samples are the bank's last, its
        // indices the bank's already. (A set that failed to load may have left samples in the
        // bank that the lists below lack: `loadSets` then throws, and nothing reads them.)
        let inPlace = bank != nil && part.bank === bank
        let first = inPlace ? part.bank.count - part.samplePaths.count : 0
        // (The same file stored alike: its path, its end faded or not, mono or stereo: a map's
        // keys store a stereo file mixed down, an SFZ file's regions keep it stereo.)
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
            shared = SharedKeySamples(bank: part.bank)
        }
        // A map of keys alone stores each file as a key's sample (mono): a later set of keys may
        // take it as it is.
        let keysOnly = part.sfz == nil && part.preset == nil
        for (i, file) in files.enumerated() where indices[i] == samplePaths.count {
            if let file { indexOfFile[file] = indices[i] }
            if keysOnly { shared?.files[part.samplePaths[i]] = indices[i] }
            samplePaths.append(part.samplePaths[i])
            fileRates.append(part.fileSampleRates[i])
            fadedEnds.append(part.fadedEnds[i])
        }
        instrument.masterVolumeDecibels += map.masterVolumeDecibels
        warnings += part.warnings.map { "\(set.name): \($0)" }
        let own = instrument.reverb
        let room = own.preset == .off || own.mix <= 0 ? ReverbSettings.off : own
        if !rooms.contains(room) { rooms.append(room) }
        loadedSets.append(
            InstrumentSet(
                name: set.name, program: set.program, bank: set.bank, channels: set.channels,
                instrument: instrument, preset: part.preset))
    }
    for set in map.sets {
        do throws(InstrumentError) {
            let loaded = try load(
                readSet(set, mapPath: mapPath, files: .disk), sampleRate: rate, start: start, shared: shared)
            rate = rate ?? loaded.sampleRate
            merge(set, loaded)
        } catch {
            problems += error.problems
        }
    }
    if !problems.isEmpty { throw InstrumentError(foldingRepeats(problems)) }
    if rooms.count > Engine.maximumRooms {
        throw InstrumentError([
            InstrumentProblem(
                file: mapPath, line: nil, column: nil, path: "sets",
                message:
                    "the sets ring in \(rooms.count) different rooms (reverb and reverbMix), more than the \(Engine.maximumRooms) bellkeys holds at once",
                fix: "let some sets share a room: give them the same reverb and reverbMix")
        ])
    }
    var loaded = LoadedInstrument(
        mapPath: mapPath, map: map, bank: bank!, instrument: loadedSets[0].instrument, sampleRate: bank!.sampleRate,
        samplePaths: samplePaths, fileSampleRates: fileRates, fadedEnds: fadedEnds,
        loadSeconds: monotonicSeconds() - start, sfz: nil, warnings: warnings)
    loaded.sets = loadedSets
    return loaded
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
