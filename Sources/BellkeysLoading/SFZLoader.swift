import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import CSndFile
import Glibc

/// Reads an SFZ file and preloads every sample its regions name (each file once, stereo kept
/// stereo, at `requested` Hz or the first sample's rate): an instrument of regions, ready to
/// play (`compileSFZ` reads it and makes its regions; this stores the samples between). A map
/// that names the file (`overriding`) replaces values of every region
/// (`CompiledSFZ.instrument(facts:overriding:)`). Thread: control.
func loadSFZInstrument(path: String, sampleRate requested: Int?, start: Double, overriding map: MapFile? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    let compiled = try compileSFZ(path: path, files: .disk)
    let rate = requested ?? firstSampleRate(compiled.samples.map(\.path)) ?? 48_000
    let bank = SampleBank(sampleRate: rate)
    var loaded: [LoadedSample] = [], problems: [InstrumentProblem] = []
    for (k, result) in loadSamples(compiled.samples, into: bank).enumerated() {
        switch result {
        case .success(let sample): loaded.append(sample)
        case .failure(let error): problems.append(compiled.problem(sample: k, error))
        }
    }
    if !problems.isEmpty { throw InstrumentError(problems) }
    let facts = loaded.map {
        SampleFacts(index: $0.index, frameCount: bank.frameCount(of: $0.index), rootKey: $0.rootKey, loop: $0.loop)
    }
    let (instrument, warnings) = compiled.instrument(facts: facts, overriding: map)
    return LoadedInstrument(
        path: path, map: map ?? MapFile.instrumentDefaults, bank: bank, instrument: instrument, sampleRate: rate,
        samplePaths: compiled.samples.map(\.path),
        fileSampleRates: loaded.map(\.fileSampleRate), fadedEnds: loaded.map(\.fadedEnd),
        loadSeconds: monotonicSeconds() - start, sfz: compiled.description, warnings: warnings)
}

/// The rate of the first of `paths` that opens (a bank's rate when none is asked for: an SFZ
/// file's samples, a map's keys). Thread: control.
func firstSampleRate(_ paths: [String]) -> Int? {
    for path in paths {
        var info = SF_INFO()
        if let file = sf_open(path, Int32(SFM_READ), &info) {
            sf_close(file)
            if info.samplerate > 0 { return Int(info.samplerate) }
        }
    }
    return nil
}
