import BellkeysModel

// A SoundFont preset compiled to the model: the preset chosen, the zones that play and the
// samples they store (each once, stereo pairs as one), the rate to play at; and, once the
// samples are stored, the regions.

/// Which preset of a SoundFont to play: `bank` and `program` (0 to 127, as sent on the wire).
/// Or by `name`: case-insensitive, the whole name or a prefix only one preset has (in `bank`,
/// or in any bank when `bankIsGiven` is false). Thread: any.
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
    public func find(in presets: [SoundFontPreset]) -> Result<SoundFontPreset, PresetNameProblem> {
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

/// Why a preset's name chose none: the message, and the presets to list with it. Thread: any.
public struct PresetNameProblem: Error, Sendable {
    public var message: String
    public var matches: [SoundFontPreset]
}

/// Whether `path` names a SoundFont (.sf2 or .sf3).
public func isSoundFontPath(_ path: String) -> Bool {
    let lower = path.lowercased()
    return lower.hasSuffix(".sf2") || lower.hasSuffix(".sf3")
}

/// A SoundFont preset chosen and its zones read: what to store, and the regions to make once the
/// samples are stored (`instrument(places:overriding:)`). Thread: any.
public struct CompiledSoundFont: Sendable {
    /// The font file as the user named it.
    public var path: String
    public var font: SoundFont
    public var preset: SoundFontPreset
    /// The zones that play, each with the sample it plays as stored (a stereo pair's left zone
    /// playing both sides).
    public var playable: [(zone: SoundFontVoiceZone, sample: StoredSample)]
    /// The samples to store, each once, in the order the zones first play them.
    public var samples: [StoredSample]
    /// The rate the bank and the output run at.
    public var sampleRate: Int
    /// What the preset asks for that bellkeys does not play, each once.
    public var warnings: [String]

    /// "bank:program name".
    public var presetName: String { "\(preset.bank):\(preset.program) \(preset.name)" }
    /// `describePreset`'s words for it.
    public var presetDescription: String {
        describePreset(bank: preset.bank, program: preset.program, name: preset.name)
    }

    /// A stored sample as the loaded lists name it: "FONT#name", "FONT#left+right" for a pair.
    public func name(of stored: StoredSample) -> String {
        "\(path)#\(font.samples[stored.header].name)" + (stored.right.map { "+" + font.samples[$0].name } ?? "")
    }

    /// A problem of the font at `chunk` (and `byte`).
    public func problem(_ chunk: String, byte: Int? = nil, _ message: String, _ fix: String) -> InstrumentError {
        soundFontProblem(path, chunk, byte: byte, message, fix)
    }
}

/// Where a stored sample of a SoundFont is in the bank: its index, the sample word its frame 0
/// was (a header's start for 16-bit data, 0 for a decoded SF3 sample) and its length.
/// Thread: any.
public struct StoredPlace: Sendable, Equatable {
    public var index: Int
    public var firstWord: Int
    public var frameCount: Int

    public init(index: Int, firstWord: Int, frameCount: Int) {
        self.index = index
        self.firstWord = firstWord
        self.frameCount = frameCount
    }
}

/// A problem of the SoundFont at `path`, at `chunk` (and `byte`): the one maker of the compile
/// step's and the loader's problems. Thread: any.
public func soundFontProblem(_ path: String, _ chunk: String, byte: Int? = nil, _ message: String, _ fix: String)
    -> InstrumentError
{
    InstrumentError([
        InstrumentProblem(file: path, line: nil, column: nil, byte: byte, path: chunk, message: message, fix: fix)
    ])
}

/// The preset of `font` (at `path`) that `choice` names (nil: bank 0 program 0, else the font's
/// first), or the problem that says why none, with the presets to choose from. Thread: any.
func chosenPreset(_ choice: PresetChoice?, in font: SoundFont, path: String) throws(InstrumentError)
    -> SoundFontPreset
{
    func problem(_ chunk: String, _ message: String, _ fix: String) -> InstrumentError {
        soundFontProblem(path, chunk, message, fix)
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
    return preset
}

/// Chooses the preset of the parsed `font` (at `path`) that `choice` names (nil: bank 0
/// program 0, else the font's first), reads its zones and the samples they play (each once; a
/// zone that ends a sample early gets its own copy; stereo pairs stored as one), and the rate to
/// play at: `requested`, else the first sample's if a sound card plays it. Generators and
/// modulators bellkeys leaves out are listed once each in `warnings`. Thread: any.
public func compileSoundFont(path: String, font: SoundFont, preset choice: PresetChoice?, sampleRate requested: Int?)
    throws(InstrumentError) -> CompiledSoundFont
{
    func problem(_ chunk: String, byte: Int? = nil, _ message: String, _ fix: String) -> InstrumentError {
        soundFontProblem(path, chunk, byte: byte, message, fix)
    }
    let preset = try chosenPreset(choice, in: font, path: path)

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
        if zone[.chorusEffectsSend] > 0 { warnOnce("its chorus send is left out: bellkeys has no chorus") }
        for modulator in zone.modulators { if let why = modulatorLeftOut(modulator) { warnOnce(why) } }
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
    let bytes = storedBytes(wanted, of: font)
    if bytes > font.sampleData.count + (64 << 20) {
        throw problem(
            "pdta/igen",
            "preset \(preset.bank):\(preset.program) \(preset.name) ends its samples at so many places that "
                + "storing them would take \(bytes >> 20) MiB",
            "the font is damaged: get it again from where it came")
    }
    return CompiledSoundFont(
        path: path, font: font, preset: preset, playable: playable.map { (zone: $0.0, sample: $0.1) },
        samples: wanted, sampleRate: rate, warnings: warnings)
}

extension CompiledSoundFont {
    /// The instrument of regions, given where each sample was stored (`places[i]` for
    /// `samples[i]`). A map that names the font (`overriding`) replaces `pitchBend` and
    /// `velocityCurve` as it does for an SFZ file. Thread: any.
    /// - Precondition: `places.count == samples.count`.
    public func instrument(places: [StoredPlace], overriding map: MapFile?) -> Instrument {
        precondition(places.count == samples.count)
        var placeOf: [StoredSample: StoredPlace] = [:]
        for (stored, place) in zip(samples, places) { placeOf[stored] = place }
        let rate = sampleRate
        var regions: [Region] = []
        for (zone, stored) in playable {
            let header = font.samples[stored.header], place = placeOf[stored]!
            var made = soundFontRegions(
                zone, header: header, sampleIndex: place.index, firstWord: place.firstWord,
                frameCount: place.frameCount,
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
        // The wheel moves fine tune by 12,700 cents × the range in semitones / 128 (the default
        // modulator's amount, over a sensitivity source of range 128).
        instrument.pitchBendReach = 127.0 / 128
        // The controllers as FluidSynth's channels start (`fluid_channel_init_ctrl`), which its
        // modulators read: volume 100, balance and pan 64, expression 127, the sound controllers 64.
        instrument.controllerDefaults = soundFontControllerDefaults
        // CC10 pans the channel, by the law FluidSynth's default pan modulator has.
        instrument.followsPanController = true
        // CC91 by FluidSynth's default modulator: a straight line, from 0 (the zones' own sends
        // sound without it).
        instrument.linearReverbSend = true
        // A key struck again lets go of its ringing voice, and an exclusive class chokes on its own
        // channel only, as in FluidSynth.
        instrument.restrikeReleases = true
        instrument.chokesWithinChannel = true
        return instrument
    }
}

/// The bytes `samples` of `font` take stored (16-bit words; an SF3 stream counted at its own
/// size, the loader checking what it decodes to). Thread: any.
func storedBytes(_ samples: [StoredSample], of font: SoundFont) -> Int {
    samples.reduce(0) { bytes, stored in
        let header = font.samples[stored.header]
        return bytes + (stored.right == nil ? 2 : 4) * max(0, header.end - header.start + stored.endOffset)
    }
}

/// A sample as the bank stores it: a sample header's frames (ended early by `endOffset`, 0 or
/// less), and for a stereo pair played as one voice, the right side's header. Thread: any.
public struct StoredSample: Hashable, Sendable {
    public var header: Int
    public var endOffset: Int
    public var right: Int?

    public init(header: Int, endOffset: Int, right: Int? = nil) {
        self.header = header
        self.endOffset = endOffset
        self.right = right
    }
}

/// The zones with each stereo pair made one zone of a stereo sample: two zones that differ only
/// in their sample and pan, one hard left and one hard right, over samples that match in
/// length, loop, rate, root key and correction. One voice then plays both sides exactly as the
/// two voices would (FluidSynth plays each side as a voice of its own). The sample headers'
/// links are preferred but not needed: FluidR3_GM's pairs, for one, leave them 0. Compressed
/// (SF3) samples stay two voices.
func pairedSides(_ zones: [(SoundFontVoiceZone, StoredSample)], in font: SoundFont) -> [(
    SoundFontVoiceZone, StoredSample
)] {
    func sameExceptSideAndPan(_ a: SoundFontVoiceZone, _ b: SoundFontVoiceZone) -> Bool {
        var x = a.generators, y = b.generators
        x[SoundFontGenerator.pan.rawValue] = 0
        y[SoundFontGenerator.pan.rawValue] = 0
        return x == y && a.keyRange == b.keyRange && a.velocityRange == b.velocityRange && a.modulators == b.modulators
    }
    func matching(_ l: SoundFontSample, _ r: SoundFontSample) -> Bool {
        l.end - l.start == r.end - r.start && l.loopStart - l.start == r.loopStart - r.start
            && l.loopEnd - l.start == r.loopEnd - r.start && l.sampleRate == r.sampleRate
            && l.originalPitch == r.originalPitch && l.pitchCorrection == r.pitchCorrection
    }
    var result: [(SoundFontVoiceZone, StoredSample)] = []
    var taken = Set<Int>()
    // (Pairs are looked for among a few thousand zones at most, and only among zones of the
    // same key and velocity ranges.)
    let searches = zones.count <= 4_096
    func ranges(_ zone: SoundFontVoiceZone) -> Int {
        zone.keyRange.lowerBound << 24 | zone.keyRange.upperBound << 16 | zone.velocityRange.lowerBound << 8
            | zone.velocityRange.upperBound
    }
    var sameRanges: [Int: [Int]] = [:]
    for (j, (zone, _)) in zones.enumerated() { sameRanges[ranges(zone), default: []].append(j) }
    for (i, (zone, stored)) in zones.enumerated() where !taken.contains(i) {
        let header = font.samples[zone.sample]
        guard searches, !(font.isCompressed && header.isCompressed), zone[.pan] <= -500 || zone[.pan] >= 500 else {
            result.append((zone, stored))
            continue
        }
        let isLeft = zone[.pan] <= -500
        let candidates = sameRanges[ranges(zone), default: []].filter { j in
            let (other, otherStored) = zones[j]
            return j != i && !taken.contains(j) && other.sample != zone.sample
                && !(font.isCompressed && font.samples[other.sample].isCompressed)
                && (isLeft ? other[.pan] >= 500 : other[.pan] <= -500) && otherStored.endOffset == stored.endOffset
                && sameExceptSideAndPan(zone, other) && matching(header, font.samples[other.sample])
        }
        let partner = candidates.first { zones[$0].0.sample == header.link } ?? candidates.first
        guard let j = partner else {
            result.append((zone, stored))
            continue
        }
        taken.insert(i)
        taken.insert(j)
        let (left, right) = isLeft ? (zone, zones[j].0) : (zones[j].0, zone)
        result.append((left, StoredSample(header: left.sample, endOffset: stored.endOffset, right: right.sample)))
    }
    return result
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
