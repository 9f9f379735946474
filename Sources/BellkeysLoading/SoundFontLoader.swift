import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import CSndFile
import Glibc

/// An open SoundFont file: its structure read, its samples still on disk. Thread: control.
final class OpenSoundFont: Sendable {
    let path: String
    let descriptor: Int32
    let font: SoundFont

    init(path: String) throws(InstrumentError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else {
            let message = fd >= 0 ? "it is a folder" : String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw InstrumentError([
                InstrumentProblem(
                    file: path, line: nil, column: nil, path: "", message: "cannot read the SoundFont: \(message)",
                    fix: "check the path (it is taken relative to the current folder) and that the file is readable")
            ])
        }
        descriptor = fd
        let bytes = SoundFontBytes(count: Int(info.st_size)) { offset, length in
            readBytes(fd, offset: offset, length: length)
        }
        do {
            font = try parseSoundFont(bytes, file: path)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// `length` bytes at `offset`, or nil if the file is shorter.
    func read(offset: Int, length: Int) -> [UInt8]? { readBytes(descriptor, offset: offset, length: length) }

    /// Fills `buffer` with the bytes at `offset`; false if the file is shorter.
    func read(into buffer: UnsafeMutableRawBufferPointer, offset: Int) -> Bool {
        readFully(descriptor, into: buffer, offset: offset)
    }
}

private func readBytes(_ fd: Int32, offset: Int, length: Int) -> [UInt8]? {
    guard length >= 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: length)
    return bytes.withUnsafeMutableBytes { readFully(fd, into: $0, offset: offset) } ? bytes : nil
}

/// Fills `buffer` with the bytes of `fd` at `offset` (`pread`, again after an interruption);
/// false if the file is shorter or cannot be read.
private func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int) -> Bool {
    guard offset >= 0 else { return false }
    var done = 0
    while done < buffer.count {
        let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
        if n < 0, errno == EINTR { continue }
        if n <= 0 { return false }
        done += n
    }
    return true
}

/// The presets of a SoundFont, sorted by bank and program, for `check`.
public func soundFontPresets(path: String) throws(InstrumentError) -> (name: String, presets: [SoundFontPreset]) {
    let file = try OpenSoundFont(path: path)
    return (file.font.name, file.font.presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) })
}

/// Reads a SoundFont's preset (`choice`; nil: bank 0 program 0, else the font's first) and
/// loads only the samples its zones play (`compileSoundFont` chooses them and makes the
/// regions; this stores the samples between): an instrument of regions, ready to play. A map
/// that names the font (`overriding`) replaces `pitchBend` and `velocityCurve`. Thread: control.
func loadSoundFontInstrument(
    path: String, preset choice: PresetChoice?, sampleRate requested: Int?, start: Double,
    overriding map: MapFile? = nil
) throws(InstrumentError) -> LoadedInstrument {
    let file = try OpenSoundFont(path: path)
    let font = file.font
    let compiled = try compileSoundFont(path: path, font: font, preset: choice, sampleRate: requested)
    let bank = SampleBank(sampleRate: compiled.sampleRate)
    let places = try store(compiled.samples, of: file, into: bank, presetName: "preset \(compiled.presetName)")
    var loaded = LoadedInstrument(
        path: path, map: map ?? MapFile.instrumentDefaults, bank: bank,
        instrument: compiled.instrument(places: places, overriding: map), sampleRate: compiled.sampleRate,
        samplePaths: compiled.samples.map(compiled.name(of:)),
        fileSampleRates: compiled.samples.map { font.samples[$0.header].sampleRate },
        fadedEnds: compiled.samples.map { _ in false },
        loadSeconds: monotonicSeconds() - start, sfz: nil, warnings: compiled.warnings)
    loaded.preset = compiled.presetName
    loaded.presetDescription = compiled.presetDescription
    return loaded
}

/// Stores `samples` of the open font in `bank`, in order: 16-bit words as they are, SF3 streams
/// decoded side by side on up to two threads (`inOrder`). Returns where each went.
/// `presetName` names what plays them in a problem ("preset 0:14 Tubular Bells"). Thread: control.
func store(_ samples: [StoredSample], of file: OpenSoundFont, into bank: SampleBank, presetName: String)
    throws(InstrumentError) -> [StoredPlace]
{
    let font = file.font
    let prepare = { @Sendable (i: Int) -> Result<PreparedSample, InstrumentError> in
        let stored = samples[i], header = font.samples[stored.header]
        return Result { () throws(InstrumentError) in
            font.isCompressed && header.isCompressed
                ? try decodeCompressed(file, header, endOffset: stored.endOffset) : try preparePCM(file, stored)
        }
    }
    // (16-bit words are a copy each, which a second thread slows down: its page faults contend
    // with the first's. Decoding is the work worth sharing.)
    let decodes = samples.contains { font.isCompressed && font.samples[$0.header].isCompressed }
    var places: [StoredPlace] = [], failure: InstrumentError?
    inOrder(count: samples.count, threads: decodes ? defaultDecodingThreads() : 1, make: prepare) { i, prepared in
        guard failure == nil else { return }
        let header = font.samples[samples[i].header]
        switch prepared {
        case .failure(let error): failure = error
        case .success(let sample):
            let index = bank.adopt(sample)
            let compressed = font.isCompressed && header.isCompressed
            places.append(
                StoredPlace(
                    index: index, firstWord: compressed ? 0 : header.start, frameCount: bank.frameCount(of: index)))
            // Ogg streams decode to about ten times their size; a damaged one could claim far more.
            if compressed, bank.byteCount > 16 * font.sampleData.count + (64 << 20) {
                failure = soundFontProblem(
                    file.path, "sdta/smpl", byte: font.sampleData.lowerBound + header.start,
                    "the compressed samples of \(presetName) decode to more than \(bank.byteCount >> 20) MiB",
                    "the font is damaged: get it again from where it came")
            } else if header.sampleRate <= 0 {
                failure = soundFontProblem(
                    file.path, "pdta/shdr", byte: font.sampleHeadersOffset + 46 * samples[i].header + 36,
                    "sample \"\(header.name)\" has a rate of 0 Hz",
                    "the font is damaged: get it again from where it came")
            }
        }
    }
    if let failure { throw failure }
    return places
}

/// Reads a whole SoundFont and loads every preset (`compileWholeSoundFont`), storing each
/// sample they play once: the presets as sets, chosen by program change and bank select as
/// FluidSynth chooses (`ProgramSelection.soundFont`). A map that names the font with no
/// preset (`map`, without keys) makes each preset's instrument as it makes one preset's.
/// `warnings` is one line when presets leave something out; `presetWarnings` lists it all.
/// Thread: control.
func loadWholeSoundFont(path: String, sampleRate requested: Int?, start: Double, map: CompiledMap? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    let file = try OpenSoundFont(path: path)
    let font = file.font
    let compiled = try compileWholeSoundFont(path: path, font: font, sampleRate: requested) { presets, compile in
        var results: [Result<CompiledSoundFont, InstrumentError>] = []
        inOrder(count: presets.count, threads: defaultDecodingThreads(), make: { compile(presets[$0]) }) {
            results.append($1)
        }
        return results
    }
    let bank = SampleBank(sampleRate: compiled.sampleRate)
    let sets: [InstrumentSet]
    if let predicted = compiled.uncompressedPlaces {
        // 16-bit words land where the font says: the presets' regions are made while they are stored.
        nonisolated(unsafe) let filling = bank
        let (stored, made) = sideBySide(
            {
                Result { () throws(InstrumentError) in
                    try store(compiled.samples, of: file, into: filling, presetName: "the font's presets")
                }
            },
            { presetSets(compiled, places: predicted, map: map) })
        let places = try stored.get()
        precondition(places == predicted, "a stored sample is where its words said")
        sets = made
    } else {
        sets = presetSets(
            compiled, places: try store(compiled.samples, of: file, into: bank, presetName: "the font's presets"),
            map: map)
    }
    let all = compiled.warnings
    let presetsWarned = Set(compiled.presets.filter { !$0.warnings.isEmpty }.map(\.presetName)).count
    let unplayable = compiled.leftOutPresets.count
    var summary: [String] = []
    if presetsWarned > 0 {
        summary.append("\(presetsWarned) of its \(sets.count) presets ask for what bellkeys leaves out")
    }
    if unplayable > 0 {
        summary.append(
            "\(unplayable) preset\(unplayable == 1 ? "" : "s") cannot be played and \(unplayable == 1 ? "is" : "are") left out"
        )
    }
    var loaded = LoadedInstrument(
        path: map?.mapPath ?? path, map: map?.map ?? MapFile.instrumentDefaults, bank: bank,
        instrument: sets[InstrumentSets(soundFontPresets: sets).startingSets[0]].instrument,
        sampleRate: compiled.sampleRate, samplePaths: compiled.samples.map(compiled.presets[0].name(of:)),
        fileSampleRates: compiled.samples.map { font.samples[$0.header].sampleRate },
        fadedEnds: compiled.samples.map { _ in false }, loadSeconds: monotonicSeconds() - start, sfz: nil,
        warnings: summary.isEmpty
            ? [] : ["\(path): " + summary.joined(separator: "; ") + " (bellkeys check --map \(path) lists what)"])
    loaded.sets = sets
    loaded.wholeFont = true
    loaded.presetWarnings = all
    return loaded
}

/// A whole font's presets as sets, their samples at `places` (`places[i]` for `samples[i]`), each
/// made as a map that names the font makes it (`map`, if one does). Thread: any.
private func presetSets(_ compiled: CompiledWholeFont, places: [StoredPlace], map: CompiledMap?) -> [InstrumentSet] {
    var placeOf: [StoredSample: StoredPlace] = [:]
    for (stored, place) in zip(compiled.samples, places) { placeOf[stored] = place }
    return compiled.presets.map { preset in
        let own = preset.instrument(places: preset.samples.map { placeOf[$0]! }, overriding: map?.map)
        let name = String(preset.preset.name.reversed().drop { $0 == " " }.reversed())
        return InstrumentSet(
            name: name, program: preset.preset.program, bank: preset.preset.bank,
            instrument: map.map { $0.instrument(bankIndex: [], base: own) } ?? own, preset: preset.presetName)
    }
}
