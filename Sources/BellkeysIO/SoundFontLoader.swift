import BellkeysEngine
import BellkeysFormats
import CSndFile
import Glibc

/// Which preset of a SoundFont to play: `bank` and `program` (0 to 127, as sent on the wire).
public struct PresetChoice: Sendable, Equatable {
    public var bank: Int
    public var program: Int
    public init(bank: Int, program: Int) {
        self.bank = bank
        self.program = program
    }
}

/// Whether `path` names a SoundFont (.sf2 or .sf3).
public func isSoundFontPath(_ path: String) -> Bool {
    let lower = path.lowercased()
    return lower.hasSuffix(".sf2") || lower.hasSuffix(".sf3")
}

/// An open SoundFont file: its structure read, its samples still on disk. Thread: control.
final class SoundFontFile {
    let path: String
    let descriptor: Int32
    let font: SoundFont

    init(path: String) throws(MapFileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard fd >= 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else {
            let message = fd >= 0 ? "it is a folder" : String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw MapFileError([
                MapProblem(
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
}

private func readBytes(_ fd: Int32, offset: Int, length: Int) -> [UInt8]? {
    guard offset >= 0, length >= 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: length)
    var done = 0
    while done < length {
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(offset + done)) }
        if n < 0, errno == EINTR { continue }
        if n <= 0 { return nil }
        done += n
    }
    return bytes
}

/// The presets of a SoundFont, sorted by bank and program, for `check`.
public func soundFontPresets(path: String) throws(MapFileError) -> (name: String, presets: [SoundFontPreset]) {
    let file = try SoundFontFile(path: path)
    return (file.font.name, file.font.presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) })
}

/// Reads a SoundFont's preset (`choice`; nil: bank 0 program 0, else the font's first) and
/// loads only the samples its zones play: an instrument of regions, ready to play. Generators
/// and modulators bellkeys leaves out are listed once each in `warnings`. A map that names the
/// font (`overriding`) replaces `pitchBend` and `velocityCurve` as it does for an SFZ file.
/// Thread: control.
func loadSoundFontInstrument(
    path: String, preset choice: PresetChoice?, sampleRate requested: Int?, start: Double,
    overriding map: MapFile? = nil
) throws(MapFileError) -> LoadedInstrument {
    let file = try SoundFontFile(path: path)
    let font = file.font
    func problem(_ chunk: String, _ message: String, _ fix: String) -> MapFileError {
        MapFileError([MapProblem(file: path, line: nil, column: nil, path: chunk, message: message, fix: fix)])
    }
    let sorted = font.presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
    let found: SoundFontPreset?
    if let choice {
        found = font.preset(bank: choice.bank, program: choice.program)
    } else {
        found = font.preset(bank: 0, program: 0) ?? sorted.first
    }
    guard let preset = found else {
        guard let choice else {
            throw problem("pdta/phdr", "the font has no presets", "use a SoundFont that holds at least one preset")
        }
        let near = sorted.filter { $0.bank == choice.bank }.prefix(8).map { "\($0.program) \($0.name)" }
        throw problem(
            "", "no preset at bank \(choice.bank), program \(choice.program)",
            "choose one the font has (bellkeys check --map \(path) lists them"
                + (near.isEmpty ? "" : "; bank \(choice.bank) has " + near.joined(separator: ", ")) + ")")
    }

    var warnings: [String] = []
    func warnOnce(_ message: String) {
        let line = "\(path): preset \(preset.bank):\(preset.program) \(preset.name): \(message)"
        if !warnings.contains(line) { warnings.append(line) }
    }
    let zones = voiceZones(of: preset, in: font)
    let smplWords = font.sampleData.count / 2

    // The samples the zones play, each once (a zone that ends a sample early gets its own copy).
    struct Stored: Hashable {
        var header: Int
        var endOffset: Int
    }
    var wanted: [Stored] = []
    var playable: [(SoundFontVoiceZone, Stored)] = []
    for zone in zones {
        let header = font.samples[zone.sample]
        if header.isROM {
            warnOnce("sample \"\(header.name)\" is in the synthesizer's ROM, not in the file: left out")
            continue
        }
        let compressed = font.isCompressed && header.isCompressed
        let limit = compressed ? font.sampleData.count : smplWords
        guard header.start < header.end, header.end <= limit, compressed || header.end - header.start >= 2 else {
            throw problem(
                "pdta/shdr",
                "at byte \(font.sampleHeadersOffset + 46 * zone.sample): sample \"\(header.name)\" (number \(zone.sample)) spans \(header.start)..<\(header.end), "
                    + "outside the \(limit) \(compressed ? "bytes" : "words") of sample data",
                "the font is damaged: get it again from where it came")
        }
        let endOffset = compressed ? 0 : zone[.endAddrsOffset] + 32_768 * zone[.endAddrsCoarseOffset]
        let stored = Stored(header: zone.sample, endOffset: min(0, max(endOffset, 2 - (header.end - header.start))))
        if !wanted.contains(stored) { wanted.append(stored) }
        playable.append((zone, stored))
        for modulator in zone.modulators { if let why = modulatorLeftOut(modulator) { warnOnce(why) } }
        let unplayed: [(SoundFontGenerator, String)] = [
            (.modLfoToPitch, "the modulation LFO"), (.modLfoToFilterFc, "the modulation LFO"),
            (.modLfoToVolume, "the modulation LFO"), (.vibLfoToPitch, "the vibrato LFO"),
            (.modEnvToPitch, "the modulation envelope"), (.modEnvToFilterFc, "the modulation envelope"),
        ]
        for (generator, what) in unplayed where zone[generator] != 0 {
            warnOnce("\(what) is left out (the preset's \(generator) is \(zone[generator]))")
        }
    }
    guard !playable.isEmpty else {
        throw problem(
            "", "preset \(preset.bank):\(preset.program) \(preset.name) has no sample bellkeys can play",
            "choose another preset (bellkeys check --map \(path) lists them)")
    }

    let rate = requested ?? font.samples[playable[0].1.header].sampleRate
    guard rate > 0 else {
        throw problem(
            "pdta/shdr", "sample \"\(font.samples[playable[0].1.header].name)\" has a rate of 0 Hz",
            "give --rate, or repair the font")
    }
    let bank = SampleBank(sampleRate: rate)
    var bankIndex: [Stored: (index: Int, firstWord: Int, frames: Int)] = [:]
    var paths: [String] = [], rates: [Int] = []
    for stored in wanted {
        let header = font.samples[stored.header]
        let index: Int, firstWord: Int
        if font.isCompressed && header.isCompressed {
            index = try decodeCompressed(file, header, into: bank)
            firstWord = 0
        } else {
            index = try storePCM(file, header, endOffset: stored.endOffset, into: bank)
            firstWord = header.start
        }
        bankIndex[stored] = (index, firstWord, bank.frameCount(of: index))
        paths.append("\(path)#\(header.name)")
        rates.append(header.sampleRate)
    }

    var regions: [Region] = []
    for (zone, stored) in playable {
        let header = font.samples[stored.header], place = bankIndex[stored]!
        var made = soundFontRegions(
            zone, header: header, sampleIndex: place.index, firstWord: place.firstWord, frameCount: place.frames,
            sampleRate: max(1, header.sampleRate), bankRate: rate)
        if let map, map.givenFields.contains("velocityCurve") {
            for i in made.indices { made[i].velocityGains = (0..<128).map { map.velocityCurve.gain(velocity: $0) } }
        }
        regions += made
    }
    var instrument = Instrument(keys: [])
    instrument.regions = regions
    instrument.followsPitchBend = map?.pitchBend ?? true
    var loaded = LoadedInstrument(
        mapPath: path, map: map ?? MapFile.instrumentDefaults, bank: bank, instrument: instrument, sampleRate: rate,
        samplePaths: paths, fileSampleRates: rates, fadedEnds: paths.map { _ in false },
        loadSeconds: monotonicSeconds() - start, sfz: nil, warnings: warnings)
    loaded.preset = "\(preset.bank):\(preset.program) \(preset.name)"
    return loaded
}

/// Stores a 16-bit sample (with its `sm24` low bytes, when the font has them) in the bank.
/// 16-bit words go in as they are; 24-bit ones are kept to 16 bits below their own peak.
private func storePCM(_ file: SoundFontFile, _ header: SoundFontSample, endOffset: Int, into bank: SampleBank)
    throws(MapFileError) -> Int
{
    let font = file.font
    let frames = header.end - header.start + endOffset
    guard let words = file.read(offset: font.sampleData.lowerBound + 2 * header.start, length: 2 * frames) else {
        throw MapFileError([
            MapProblem(
                file: file.path, line: nil, column: nil, path: "sdta/smpl",
                message:
                    "at byte \(font.sampleData.lowerBound + 2 * header.start): cannot read sample \"\(header.name)\"",
                fix: "the file is cut short: copy or download it again")
        ])
    }
    let low = font.sampleLowBytes.flatMap { file.read(offset: $0.lowerBound + header.start, length: frames) }
    guard let low else {
        return bank.appendPCM16(frameCount: frames, scale: 1.0 / 32_768) { buffer in
            for i in 0..<frames { buffer[i] = Int16(bitPattern: UInt16(words[2 * i]) | UInt16(words[2 * i + 1]) << 8) }
        }
    }
    var values = [Int32](repeating: 0, count: frames)
    var peak: Int32 = 0
    for i in 0..<frames {
        let high = Int32(Int16(bitPattern: UInt16(words[2 * i]) | UInt16(words[2 * i + 1]) << 8))
        values[i] = high << 8 | Int32(low[i])
        peak = max(peak, abs(values[i]))
    }
    // The smallest power of two that brings the peak into 15 bits.
    var shift: Int32 = 0
    while peak >> shift > 32_767 { shift += 1 }
    let scale = Float(1 << shift) / 8_388_608
    return bank.appendPCM16(frameCount: frames, scale: scale) { buffer in
        let half = shift > 0 ? Int32(1) << (shift - 1) : 0
        for i in 0..<frames { buffer[i] = Int16(max(-32_767, min(32_767, (values[i] + half) >> shift))) }
    }
}

/// Decodes an SF3 sample (an Ogg Vorbis stream inside `smpl`) through libsndfile and stores it.
private func decodeCompressed(_ file: SoundFontFile, _ header: SoundFontSample, into bank: SampleBank)
    throws(MapFileError) -> Int
{
    let font = file.font
    func failure(_ message: String) -> MapFileError {
        MapFileError([
            MapProblem(
                file: file.path, line: nil, column: nil, path: "sdta/smpl",
                message: "at byte \(font.sampleData.lowerBound + header.start): sample \"\(header.name)\": \(message)",
                fix: "the font is damaged: get it again from where it came")
        ])
    }
    guard let bytes = file.read(offset: font.sampleData.lowerBound + header.start, length: header.end - header.start)
    else { throw failure("cannot read its \(header.end - header.start) bytes") }
    var frames: [Float] = []
    var decodeError: String?
    bytes.withUnsafeBufferPointer { data in
        var memory = bellkeys_memory(data: data.baseAddress, length: sf_count_t(data.count), position: 0)
        var info = SF_INFO()
        guard let sound = bellkeys_open_memory(&memory, &info) else {
            decodeError = "not an Ogg Vorbis stream libsndfile reads (\(String(cString: sf_strerror(nil))))"
            return
        }
        defer { sf_close(sound) }
        guard info.channels == 1, info.frames > 0, info.frames < 1 << 31 else {
            decodeError = "\(info.channels) channels and \(info.frames) frames: a sample is mono and not empty"
            return
        }
        frames = [Float](repeating: 0, count: Int(info.frames))
        let got = frames.withUnsafeMutableBufferPointer { sf_readf_float(sound, $0.baseAddress, info.frames) }
        if got < 1 { decodeError = "it decodes to no frames" }
        frames.removeLast(frames.count - Int(max(0, got)))
    }
    if let decodeError { throw failure(decodeError) }
    for x in frames where !x.isFinite { throw failure("it decodes to values that are not numbers") }
    return bank.append(frames)
}
