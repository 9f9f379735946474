import BellkeysEngine
import BellkeysFormats
import CSndFile

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

    /// Whether any sample was resampled to `sampleRate`.
    public var resampled: Bool { fileSampleRates.contains { $0 != sampleRate } }
}

/// Reads and validates a map file and preloads every sample it names (each file once).
/// Samples at another rate than `sampleRate` (default: the first sample's rate) are
/// resampled here, once. All problems are reported together. Thread: control.
public func loadInstrument(mapPath: String, sampleRate requested: Int? = nil) throws(MapFileError) -> LoadedInstrument {
    let start = monotonicSeconds()
    let bytes: [UInt8]
    do {
        bytes = try readFile(mapPath, limit: 4 << 20, what: "map file")
    } catch {
        throw MapFileError([
            MapProblem(
                file: mapPath, line: nil, column: nil, path: "",
                message: "cannot read the map file: \(error.message)", fix: error.fix)
        ])
    }
    let map = try parseMapFile(bytes, file: mapPath)
    let folder = directoryName(mapPath)

    let rate = requested ?? firstSampleRate(map: map, folder: folder) ?? 48_000
    let bank = SampleBank(sampleRate: rate)
    var paths: [String] = [], loaded: [LoadedSample] = []
    var indexForPath: [String: Int] = [:]
    var sampleIndexForKey: [Int] = []
    var problems: [MapProblem] = []
    for key in map.keys {
        let path = resolve(key.sample, from: folder)
        if let index = indexForPath[path] {
            sampleIndexForKey.append(index)
            continue
        }
        do {
            let sample = try loadSample(path: path, into: bank)
            indexForPath[path] = sample.index
            sampleIndexForKey.append(sample.index)
            paths.append(path)
            loaded.append(sample)
        } catch {
            indexForPath[path] = -1
            sampleIndexForKey.append(-1)
            let shown = path == key.sample ? "\"\(key.sample)\"" : "\"\(key.sample)\" (\(path))"
            problems.append(
                MapProblem(
                    file: mapPath, line: key.sampleLine, column: key.sampleColumn,
                    path: key.path + ".sample", message: "\(shown): \(error.message)",
                    fix: error.fix))
        }
    }
    if !problems.isEmpty { throw MapFileError(problems) }

    return LoadedInstrument(
        mapPath: mapPath, map: map, bank: bank,
        instrument: map.instrument(sampleIndexForKey: sampleIndexForKey), sampleRate: rate,
        samplePaths: paths, fileSampleRates: loaded.map(\.fileSampleRate),
        fadedEnds: loaded.map(\.fadedEnd),
        loadSeconds: monotonicSeconds() - start)
}

/// The rate of the first sample file that opens (the bank's rate when none is asked for).
private func firstSampleRate(map: MapFile, folder: String) -> Int? {
    for key in map.keys {
        var info = SF_INFO()
        if let file = sf_open(resolve(key.sample, from: folder), Int32(SFM_READ), &info) {
            sf_close(file)
            if info.samplerate > 0 { return Int(info.samplerate) }
        }
    }
    return nil
}
