import BellkeysModel

// A whole SoundFont as the instrument: every preset compiled, each sample they play stored
// once, and each channel's program change and bank select choosing among them as FluidSynth
// chooses (`ProgramSelection.soundFont`).

/// Every preset of a SoundFont compiled, for playing the whole font: the presets in bank and
/// program order, and the samples
/// they play, each once. Thread: any.
public struct CompiledWholeFont: Sendable {
    public var path: String
    public var font: SoundFont
    public var presets: [CompiledSoundFont]
    /// Every preset's samples, each once, in the order the presets first play them.
    public var samples: [StoredSample]
    public var sampleRate: Int
    /// Presets that cannot be played, each with why (a line each); they are left out.
    public var leftOutPresets: [String]

    /// What the presets ask for that bellkeys does not play: a line for each, per preset.
    public var warnings: [String] { leftOutPresets + presets.flatMap(\.warnings) }

    /// Where each sample will be in a bank that stores them in order from empty, when none is
    /// compressed (16-bit words: a sample's length and first word are the font's); nil for SF3
    /// samples, whose length only decoding tells.
    public var uncompressedPlaces: [StoredPlace]? {
        var places: [StoredPlace] = []
        for (index, stored) in samples.enumerated() {
            let header = font.samples[stored.header]
            if font.isCompressed && header.isCompressed { return nil }
            places.append(
                StoredPlace(
                    index: index, firstWord: header.start, frameCount: header.end - header.start + stored.endOffset))
        }
        return places
    }
}

/// Compiles every preset of the parsed `font` (at `path`) as `compileSoundFont` compiles one,
/// at one rate: `requested`, else the rate most of its samples have, if a sound card plays it
/// (44,100 Hz in each General MIDI font Debian has, FluidSynth's rate), else 44,100 Hz. Each
/// sample plays at its own rate. A preset that cannot be played (its samples are in ROM,
/// or its zones are damaged) is left out with why; a font none of whose presets plays is an
/// error, as is one whose presets store far more than its sample data. A second preset at the
/// same bank and program is left out, as FluidSynth finds only the first. `each` compiles the
/// presets (in order; the loader shares them between threads). Thread: any.
public func compileWholeSoundFont(
    path: String, font: SoundFont, sampleRate requested: Int?,
    each: ([SoundFontPreset], @escaping @Sendable (SoundFontPreset) -> Result<CompiledSoundFont, InstrumentError>) ->
        [Result<CompiledSoundFont, InstrumentError>] = { presets, compile in presets.map(compile) }
) throws(InstrumentError) -> CompiledWholeFont {
    let sorted = font.presets.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
    guard !sorted.isEmpty else {
        throw soundFontProblem(
            path, "pdta/phdr", "the font has no presets", "use a SoundFont that holds at least one preset")
    }
    var counts: [Int: Int] = [:]
    for sample in font.samples where !sample.isROM { counts[sample.sampleRate, default: 0] += 1 }
    let common = counts.max { ($0.value, $0.key) < ($1.value, $1.key) }?.key ?? 44_100
    let rate = requested ?? ((8_000...384_000).contains(common) ? common : 44_100)
    var seen = Set<Int>()
    var leftOut: [String] = []
    // (A program change reaches programs 0 to 127 of banks 0 to 127, and the kits of bank 128.)
    let chosen = sorted.filter { preset in
        guard preset.program <= 127, preset.bank <= 128 else {
            leftOut.append(
                "\(path): preset \(preset.bank):\(preset.program) \(preset.name) is left out: "
                    + "no program change chooses bank \(preset.bank) program \(preset.program) (play it alone with --program and its name)"
            )
            return false
        }
        return seen.insert(preset.bank << 7 | preset.program).inserted
    }
    let results = each(chosen) { preset in
        Result { () throws(InstrumentError) in
            try compileSoundFont(
                path: path, font: font, preset: PresetChoice(bank: preset.bank, program: preset.program),
                sampleRate: rate)
        }
    }
    var presets: [CompiledSoundFont] = []
    for (preset, result) in zip(chosen, results) {
        switch result {
        case .success(let compiled): presets.append(compiled)
        case .failure(let error):
            let why = error.problems.map(\.message).joined(separator: "; ")
            leftOut.append("\(path): preset \(preset.bank):\(preset.program) \(preset.name) is left out: \(why)")
        }
    }
    guard !presets.isEmpty else {
        throw soundFontProblem(
            path, "",
            "none of the font's \(font.presets.count) presets has a sample bellkeys can play"
                + (leftOut.first.map { " (\($0))" } ?? ""),
            "the font is damaged, or holds its samples in a synthesizer's ROM: use another font")
    }
    if presets.count > InstrumentSets.maximumSets {
        throw soundFontProblem(
            path, "pdta/phdr",
            "the font has \(presets.count) presets, more than the \(InstrumentSets.maximumSets) bellkeys holds",
            "play one preset (--program)")
    }
    var samples: [StoredSample] = [], stored = Set<StoredSample>()
    for preset in presets {
        for sample in preset.samples where stored.insert(sample).inserted { samples.append(sample) }
    }
    // Each preset is within its own budget; together they may store a sample alone and in a
    // pair, but not much more than the font holds.
    let bytes = storedBytes(samples, of: font)
    if bytes > 2 * font.sampleData.count + (64 << 20) {
        throw soundFontProblem(
            path, "pdta/igen",
            "the font's presets end their samples at so many places that storing them would take \(bytes >> 20) MiB",
            "the font is damaged: get it again from where it came; or play one preset (--program)")
    }
    return CompiledWholeFont(
        path: path, font: font, presets: presets, samples: samples, sampleRate: rate, leftOutPresets: leftOut)
}
