import BellkeysEngine
import BellkeysFormats
import BellkeysModel
import CSndFile
import Glibc

/// Which preset of a SoundFont to play: `bank` and `program` (0 to 127, as sent on the wire).
/// Or by `name`: case-insensitive, the whole name or a prefix only one preset has (in `bank`,
/// or in any bank when `bankIsGiven` is false).
public struct PresetChoice: Sendable, Equatable {
    public var bank: Int
    public var program: Int
    public var name: String?
    public var bankIsGiven: Bool
    public init(bank: Int, program: Int) {
        self.bank = bank
        self.program = program
        name = nil
        bankIsGiven = true
    }

    /// The preset named `name` (a unique prefix will do), in `bank` if given. Thread: any.
    public init(name: String, bank: Int?) {
        self.bank = bank ?? 0
        program = 0
        self.name = name
        bankIsGiven = bank != nil
    }

    /// The preset this choice names among `presets`, or why none: no such name (with the
    /// presets' names that come nearest), or a prefix several have (with them). Thread: any.
    func find(in presets: [SoundFontPreset]) -> Result<SoundFontPreset, PresetNameProblem> {
        guard let name else {
            return presets.first { $0.bank == bank && $0.program == program }.map { .success($0) }
                ?? .failure(PresetNameProblem(message: "no preset at bank \(bank), program \(program)", matches: []))
        }
        func plain(_ text: String) -> String {
            text.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let wanted = plain(name)
        let pool = presets.filter { !bankIsGiven || $0.bank == bank }
            .sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
        let exact = pool.filter { plain($0.name) == wanted }
        if exact.count == 1 { return .success(exact[0]) }
        let prefixed = exact.isEmpty ? pool.filter { plain($0.name).hasPrefix(wanted) } : exact
        if prefixed.count == 1 { return .success(prefixed[0]) }
        let place = bankIsGiven ? " in bank \(bank)" : ""
        if prefixed.isEmpty {
            let near = pool.filter { plain($0.name).contains(wanted) }
            return .failure(PresetNameProblem(message: "no preset named \"\(name)\"\(place)", matches: near))
        }
        return .failure(
            PresetNameProblem(message: "\"\(name)\" names \(prefixed.count) presets\(place)", matches: prefixed))
    }
}

/// Why a preset's name chose none: the message, and the presets to list with it.
struct PresetNameProblem: Error {
    var message: String
    var matches: [SoundFontPreset]
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
public func soundFontPresets(path: String) throws(InstrumentError) -> (name: String, presets: [SoundFontPreset]) {
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
) throws(InstrumentError) -> LoadedInstrument {
    let file = try SoundFontFile(path: path)
    let font = file.font
    func problem(_ chunk: String, byte: Int? = nil, _ message: String, _ fix: String) -> InstrumentError {
        InstrumentError([
            InstrumentProblem(file: path, line: nil, column: nil, byte: byte, path: chunk, message: message, fix: fix)
        ])
    }
    let sorted = font.presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
    let found: SoundFontPreset?
    if let choice, choice.name != nil {
        switch choice.find(in: font.presets) {
        case .success(let named): found = named
        case .failure(let trouble):
            let listed = trouble.matches.prefix(12).map { "\($0.bank):\($0.program) \($0.name)" }
            // Presets of one name in several banks: only --bank tells them apart.
            let sameName = Set(trouble.matches.map { $0.name.lowercased() }).count == 1
            throw problem(
                "", trouble.message,
                (listed.isEmpty
                    ? "give a preset's name or number (bellkeys check --map \(path) lists them)"
                    : (sameName ? "add --bank to choose one: " : "give more of the name, or the number: ")
                        + listed.joined(separator: ", ") + (trouble.matches.count > listed.count ? ", ..." : "")))
        }
    } else if let choice {
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
    guard let zones = voiceZones(of: preset, in: font) else {
        throw problem(
            "pdta/pbag",
            "preset \(preset.bank):\(preset.program) \(preset.name) pairs more zones than bellkeys plays "
                + "(\(maximumVoiceZones))",
            "the font is damaged, or made for a synthesizer with no such limit: choose another preset")
    }
    let smplWords = font.sampleData.count / 2

    // The samples the zones play, each once (a zone that ends a sample early gets its own copy).
    var playable: [(SoundFontVoiceZone, StoredSample)] = []
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
                "pdta/shdr", byte: font.sampleHeadersOffset + 46 * zone.sample,
                "sample \"\(header.name)\" (number \(zone.sample)) spans \(header.start)..<\(header.end), "
                    + "outside the \(limit) \(compressed ? "bytes" : "words") of sample data",
                "the font is damaged: get it again from where it came")
        }
        // An SF3 sample's end offset counts frames of the decoded sample (applied there).
        let endOffset = zone[.endAddrsOffset] + 32_768 * zone[.endAddrsCoarseOffset]
        let stored = StoredSample(
            header: zone.sample,
            endOffset: compressed ? min(0, endOffset) : min(0, max(endOffset, 2 - (header.end - header.start))))
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

    // The output runs at the first sample's rate, if it is one a sound card plays.
    let firstRate = font.samples[playable[0].1.header].sampleRate
    let rate = requested ?? ((8_000...384_000).contains(firstRate) ? firstRate : 44_100)
    if requested == nil, rate != firstRate {
        warnOnce("its first sample's rate, \(firstRate) Hz, is not one to play at: playing at 44100 Hz")
    }
    playable = pairedSides(playable, in: font)
    var wanted: [StoredSample] = [], seen = Set<StoredSample>()
    for (_, stored) in playable where seen.insert(stored).inserted { wanted.append(stored) }
    // Zones that end one sample at many places store a copy for each: a budget, past which the
    // font is refused rather than filling memory.
    let budget = font.sampleData.count + (64 << 20)
    var bytes = 0
    for stored in wanted {
        let header = font.samples[stored.header]
        bytes += (stored.right == nil ? 2 : 4) * max(0, header.end - header.start + stored.endOffset)
    }
    if bytes > budget {
        throw problem(
            "pdta/igen",
            "preset \(preset.bank):\(preset.program) \(preset.name) ends its samples at so many places that "
                + "storing them would take \(bytes >> 20) MiB",
            "the font is damaged: get it again from where it came")
    }
    let bank = SampleBank(sampleRate: rate)
    var bankIndex: [StoredSample: (index: Int, firstWord: Int, frames: Int)] = [:]
    var paths: [String] = [], rates: [Int] = []
    for stored in wanted {
        let header = font.samples[stored.header]
        let index: Int, firstWord: Int
        if font.isCompressed && header.isCompressed {
            index = try decodeCompressed(file, header, endOffset: stored.endOffset, into: bank)
            firstWord = 0
            // Ogg streams decode to about ten times their size; a damaged one could claim far more.
            if bank.byteCount > 16 * font.sampleData.count + (64 << 20) {
                throw problem(
                    "sdta/smpl", byte: font.sampleData.lowerBound + header.start,
                    "preset \(preset.bank):\(preset.program) "
                        + "\(preset.name)'s compressed samples decode to more than \(bank.byteCount >> 20) MiB",
                    "the font is damaged: get it again from where it came")
            }
        } else {
            index = try storePCM(file, stored, into: bank)
            firstWord = header.start
        }
        bankIndex[stored] = (index, firstWord, bank.frameCount(of: index))
        if header.sampleRate <= 0 {
            throw problem(
                "pdta/shdr", byte: font.sampleHeadersOffset + 46 * stored.header + 36,
                "sample \"\(header.name)\" has a rate of 0 Hz",
                "the font is damaged: get it again from where it came")
        }
        paths.append("\(path)#\(header.name)" + (stored.right.map { "+" + font.samples[$0].name } ?? ""))
        rates.append(header.sampleRate)
    }

    var regions: [Region] = []
    for (zone, stored) in playable {
        let header = font.samples[stored.header], place = bankIndex[stored]!
        var made = soundFontRegions(
            zone, header: header, sampleIndex: place.index, firstWord: place.firstWord, frameCount: place.frames,
            sampleRate: max(1, header.sampleRate), bankRate: rate)
        for i in made.indices {
            if let map, map.givenFields.contains("velocityCurve") {
                made[i].velocityGains = (0..<128).map { map.velocityCurve.gain(velocity: $0) }
            }
            if stored.right != nil {
                // Each side at full level, as a mono voice panned hard to it plays (√2 by the
                // engine's pan law, against a stereo sample's 1 at the centre).
                made[i].pan = 0
                made[i].gain *= Float(2.0.squareRoot())
            }
        }
        regions += made
    }
    var instrument = Instrument()
    instrument.regions = regions
    instrument.followsPitchBend = map?.pitchBend ?? true
    // CC10 pans the channel, by the law FluidSynth's default pan modulator has.
    instrument.followsPanController = true
    // A key struck again lets go of its ringing voice, and an exclusive class chokes on its own
    // channel only, as in FluidSynth.
    instrument.restrikeReleases = true
    instrument.chokesWithinChannel = true
    var loaded = LoadedInstrument(
        mapPath: path, map: map ?? MapFile.instrumentDefaults, bank: bank, instrument: instrument, sampleRate: rate,
        samplePaths: paths, fileSampleRates: rates, fadedEnds: paths.map { _ in false },
        loadSeconds: monotonicSeconds() - start, sfz: nil, warnings: warnings)
    loaded.preset = "\(preset.bank):\(preset.program) \(preset.name)"
    loaded.presetDescription = describePreset(bank: preset.bank, program: preset.program, name: preset.name)
    return loaded
}

/// A preset as the start-up report, `render` and `check` name it, with General MIDI's number
/// beside bellkeys' (which counts from 0, as sent on the wire, where General MIDI's list counts
/// from 1): "preset 0:14 Tubular Bells (General MIDI's program 15)"; a drum kit (bank 128) is
/// said to be one. Thread: any.
public func describePreset(bank: Int, program: Int, name: String) -> String {
    let trimmed = String(name.reversed().drop { $0 == " " }.reversed().drop { $0 == " " })
    let gm =
        bank == 128
        ? "a drum kit, bank 128"
        : bank == 0 ? "General MIDI's program \(program + 1)" : "program \(program + 1) counted from 1"
    return "preset \(bank):\(program) \(trimmed) (\(gm))"
}
