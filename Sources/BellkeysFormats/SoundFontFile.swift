/// A SoundFont 2 (or SF3) file's structure as read: its presets, instruments and sample headers
/// (the `pdta` chunk), and where its sample data lies (`smpl`, `sm24`), which is not read here.
/// SoundFont 2.04 (sections 4 to 8) gives the layout; where it leaves room, FluidSynth's reader
/// decides (which generators a zone keeps, what makes a global zone).
public struct SoundFont: Sendable {
    /// The file as the user named it.
    public var file: String
    /// `ifil`: 2.x for SoundFont 2, 3.x for SF3 (Ogg Vorbis samples).
    public var versionMajor = 2, versionMinor = 1
    /// `INAM`: the font's name.
    public var name = ""
    public var presets: [SoundFontPreset] = []
    public var instruments: [SoundFontInstrument] = []
    public var samples: [SoundFontSample] = []
    /// Where `smpl` (16-bit words; an SF3's Ogg streams) and `sm24` (the low bytes of 24-bit
    /// samples) lie in the file: byte offset and length.
    public var sampleData = 0..<0
    public var sampleLowBytes: Range<Int>?
    /// Where the sample headers (`shdr`, 46 bytes each) start in the file, for messages.
    public var sampleHeadersOffset = 0

    /// Whether the samples are compressed (Ogg Vorbis: SF3, `ifil` 3.x).
    public var isCompressed: Bool { versionMajor == 3 }

    /// The preset at `bank` and `program` (the first such, as FluidSynth finds it).
    public func preset(bank: Int, program: Int) -> SoundFontPreset? {
        presets.first { $0.bank == bank && $0.program == program }
    }
}

/// A preset: what a bank and program number select. Its zones name instruments.
public struct SoundFontPreset: Sendable {
    public var name: String
    public var program: Int
    public var bank: Int
    public var global: SoundFontZone?
    public var zones: [SoundFontZone]
}

/// An instrument: zones that name samples.
public struct SoundFontInstrument: Sendable {
    public var name: String
    public var global: SoundFontZone?
    public var zones: [SoundFontZone]
}

/// A zone: generators (by number, the raw 16-bit amount) and modulators, and the instrument (in
/// a preset) or sample (in an instrument) it plays; nil for a global zone.
public struct SoundFontZone: Sendable {
    public var generators: [Int: Int16] = [:]
    public var modulators: [SoundFontModulator] = []
    public var target: Int?

    /// A range generator's low and high bytes (nil: not given). A reversed range (low above
    /// high) matches nothing, as in FluidSynth: it is returned as 128...128.
    public func range(_ generator: SoundFontGenerator) -> ClosedRange<Int>? {
        guard let raw = generators[generator.rawValue] else { return nil }
        let bits = UInt16(bitPattern: raw)
        let low = Int(bits & 0xFF), high = Int(bits >> 8)
        return low <= high ? low...high : 128...128
    }
}

/// A modulator record (SoundFont 2.04 section 8.2).
public struct SoundFontModulator: Sendable, Equatable {
    public var source: UInt16
    public var destination: UInt16
    public var amount: Int16
    public var amountSource: UInt16
    public var transform: UInt16

    public init(source: UInt16, destination: UInt16, amount: Int16, amountSource: UInt16, transform: UInt16) {
        self.source = source
        self.destination = destination
        self.amount = amount
        self.amountSource = amountSource
        self.transform = transform
    }

    /// Whether it is the same modulator as `other` apart from the amount (section 9.5.1).
    public func isSame(as other: SoundFontModulator) -> Bool {
        source == other.source && destination == other.destination && amountSource == other.amountSource
            && transform == other.transform
    }
}

/// A sample header (`shdr`).
public struct SoundFontSample: Sendable {
    public var name: String
    /// In 16-bit words from the start of `smpl` (an SF3's compressed sample: byte offsets of its
    /// Ogg stream); `end` is the first word after the sample.
    public var start: Int, end: Int
    /// The loop's first word and the word after it (an SF3's: frames of the decoded sample).
    public var loopStart: Int, loopEnd: Int
    public var sampleRate: Int
    /// The key at which it sounds at its recorded pitch (255: unpitched), and a correction in cents.
    public var originalPitch: Int
    public var pitchCorrection: Int
    /// The other side of a stereo pair, and the type (1 mono, 2 right, 4 left, 8 linked; 0x8000
    /// in ROM; 0x10 compressed).
    public var link: Int
    public var type: Int

    public var isROM: Bool { type & 0x8000 != 0 }
    public var isCompressed: Bool { type & 0x10 != 0 }
}

/// Generator numbers (SoundFont 2.04 section 8.1.2).
public enum SoundFontGenerator: Int, Sendable, CaseIterable {
    case startAddrsOffset = 0, endAddrsOffset, startloopAddrsOffset, endloopAddrsOffset, startAddrsCoarseOffset
    case modLfoToPitch, vibLfoToPitch, modEnvToPitch, initialFilterFc, initialFilterQ, modLfoToFilterFc
    case modEnvToFilterFc, endAddrsCoarseOffset, modLfoToVolume
    case chorusEffectsSend = 15, reverbEffectsSend, pan
    case delayModLFO = 21, freqModLFO, delayVibLFO, freqVibLFO, delayModEnv, attackModEnv, holdModEnv
    case decayModEnv, sustainModEnv, releaseModEnv, keynumToModEnvHold, keynumToModEnvDecay
    case delayVolEnv, attackVolEnv, holdVolEnv, decayVolEnv, sustainVolEnv, releaseVolEnv
    case keynumToVolEnvHold, keynumToVolEnvDecay, instrument
    case keyRange = 43, velRange, startloopAddrsCoarseOffset, keynum, velocity, initialAttenuation
    case endloopAddrsCoarseOffset = 50, coarseTune, fineTune, sampleID, sampleModes
    case scaleTuning = 56, exclusiveClass, overridingRootKey

    /// The value a voice starts from before any zone sets it.
    public var defaultValue: Int {
        switch self {
        case .initialFilterFc: 13_500
        case .delayModLFO, .delayVibLFO, .delayModEnv, .attackModEnv, .holdModEnv, .decayModEnv,
            .releaseModEnv, .delayVolEnv, .attackVolEnv, .holdVolEnv, .decayVolEnv, .releaseVolEnv:
            -12_000
        case .keyRange, .velRange: 127 << 8
        case .keynum, .velocity, .overridingRootKey: -1
        case .scaleTuning: 100
        default: 0
        }
    }

    /// Generators only an instrument zone may give (a preset's are dropped; section 8.1.3).
    public var isInstrumentOnly: Bool {
        switch self {
        case .startAddrsOffset, .endAddrsOffset, .startloopAddrsOffset, .endloopAddrsOffset,
            .startAddrsCoarseOffset, .endAddrsCoarseOffset, .startloopAddrsCoarseOffset,
            .endloopAddrsCoarseOffset, .keynum, .velocity, .sampleModes, .exclusiveClass, .overridingRootKey,
            .sampleID:
            true
        default: false
        }
    }
}

/// Random access to a font's bytes: the file itself (only the parts needed are read), or
/// bytes in memory (tests, fuzzing).
public struct SoundFontBytes: Sendable {
    /// Bytes in all.
    public var count: Int
    /// `length` bytes from `offset`, or nil if they cannot be read.
    public var read: @Sendable (_ offset: Int, _ length: Int) -> [UInt8]?

    public init(count: Int, read: @escaping @Sendable (_ offset: Int, _ length: Int) -> [UInt8]?) {
        self.count = count
        self.read = read
    }

    public init(_ bytes: [UInt8]) {
        count = bytes.count
        read = { offset, length in
            offset >= 0 && length >= 0 && offset <= bytes.count - length ? Array(bytes[offset..<offset + length]) : nil
        }
    }
}

/// Reads a SoundFont's structure (not its sample data). A broken or truncated file is an error
/// that names the file, the chunk, the byte and the fix.
public func parseSoundFont(_ bytes: SoundFontBytes, file: String) throws(MapFileError) -> SoundFont {
    var reader = SoundFontReader(bytes: bytes, file: file)
    do {
        return try reader.read()
    } catch {
        throw MapFileError([
            MapProblem(
                file: file, line: nil, column: nil, path: error.chunk,
                message: "at byte \(error.offset): \(error.message)", fix: error.fix)
        ])
    }
}

struct SoundFontReadError: Error {
    var chunk: String
    var offset: Int
    var message: String
    var fix: String
}

/// The sizes of the `pdta` records.
private let recordSizes = [
    "phdr": 38, "pbag": 4, "pmod": 10, "pgen": 4, "inst": 22, "ibag": 4, "imod": 10, "igen": 4, "shdr": 46,
]

private struct SoundFontReader {
    let bytes: SoundFontBytes
    let file: String
    var font: SoundFont

    init(bytes: SoundFontBytes, file: String) {
        self.bytes = bytes
        self.file = file
        font = SoundFont(file: file)
    }

    static let damaged =
        "the file is damaged: get it again from where it came (a SoundFont editor such as Polyphone can repair some)"
    static let truncated = "the file is cut short: copy or download it again"

    func fail(_ chunk: String, _ offset: Int, _ message: String, fix: String = damaged) -> SoundFontReadError {
        SoundFontReadError(chunk: chunk, offset: offset, message: message, fix: fix)
    }

    func load(_ chunk: String, _ offset: Int, _ length: Int) throws(SoundFontReadError) -> [UInt8] {
        guard let data = bytes.read(offset, length) else {
            throw fail(chunk, offset, "cannot read \(length) bytes", fix: SoundFontReader.truncated)
        }
        return data
    }

    mutating func read() throws(SoundFontReadError) -> SoundFont {
        guard bytes.count >= 12 else {
            throw fail(
                "RIFF", 0, "the file is \(bytes.count) bytes, too short for a SoundFont",
                fix: "name a SoundFont file (.sf2 or .sf3)")
        }
        let header = try load("RIFF", 0, 12)
        guard tag(header, 0) == "RIFF", tag(header, 8) == "sfbk" else {
            throw fail(
                "RIFF", 0,
                "not a SoundFont: it starts \"\(tag(header, 0))\" ... \"\(tag(header, 8))\", not RIFF ... sfbk",
                fix: "name a SoundFont file (.sf2 or .sf3); an SFZ instrument ends in .sfz, a map in .json")
        }
        let riffEnd = 8 + Int(u32(header, 4))
        if riffEnd > bytes.count {
            throw fail(
                "RIFF", 4, "the header says the file holds \(riffEnd) bytes, but it has \(bytes.count)",
                fix: SoundFontReader.truncated)
        }
        var lists: [String: Range<Int>] = [:]
        var offset = 12
        while offset + 8 <= riffEnd {
            let chunkHeader = try load("RIFF", offset, 12 <= riffEnd - offset ? 12 : 8)
            let id = tag(chunkHeader, 0), size = Int(u32(chunkHeader, 4))
            let bodyEnd = offset + 8 + size
            guard bodyEnd <= riffEnd else {
                throw fail(
                    id, offset, "the chunk says it holds \(size) bytes, but only \(riffEnd - offset - 8) remain",
                    fix: SoundFontReader.truncated)
            }
            if id == "LIST", size >= 4 {
                let type = tag(chunkHeader, 8)
                if lists[type] == nil { lists[type] = offset + 12..<bodyEnd }
            }
            offset = try afterChunk(bodyEnd, size: size, end: riffEnd) { at throws(SoundFontReadError) in
                try load("RIFF", at, 4)
            }
        }
        for needed in ["INFO", "sdta", "pdta"] where lists[needed] == nil {
            throw fail(
                needed, riffEnd, "the file has no \(needed) list",
                fix: "the file is damaged or not a SoundFont: get it again from where it came")
        }
        try readInfo(lists["INFO"]!)
        try readSampleData(lists["sdta"]!)
        try readPresetData(lists["pdta"]!)
        return font
    }

    /// Where the chunk after one of `size` bytes ending at `bodyEnd` starts. RIFF pads an odd
    /// chunk to an even length, but FluidSynth reads no pad byte, and fonts made for it (SF3
    /// fonts from MuseScore among them) have none: with an odd size, the next chunk starts
    /// right after this one if an id is there (four printable characters), else a byte later.
    func afterChunk(
        _ bodyEnd: Int, size: Int, end: Int, peek: (Int) throws(SoundFontReadError) -> [UInt8]
    ) throws(SoundFontReadError) -> Int {
        guard size & 1 == 1, bodyEnd + 4 <= end else { return bodyEnd + (size & 1) }
        let id = try peek(bodyEnd)
        return id.allSatisfy({ (32...126).contains($0) }) ? bodyEnd : bodyEnd + 1
    }

    /// The sub-chunks of a LIST (id, body range), checked to lie inside it.
    func subchunks(_ list: String, _ range: Range<Int>, _ data: [UInt8]?) throws(SoundFontReadError) -> [(
        String, Range<Int>
    )] {
        var found: [(String, Range<Int>)] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            let header: [UInt8]
            if let data {
                header = Array(data[(offset - range.lowerBound)..<(offset - range.lowerBound + 8)])
            } else {
                header = try load(list, offset, 8)
            }
            let id = tag(header, 0), size = Int(u32(header, 4))
            guard offset + 8 + size <= range.upperBound else {
                throw fail(
                    "\(list)/\(id)", offset,
                    "the chunk says it holds \(size) bytes, but the \(list) list has \(range.upperBound - offset - 8) left"
                )
            }
            found.append((id, offset + 8..<offset + 8 + size))
            offset = try afterChunk(offset + 8 + size, size: size, end: range.upperBound) {
                at throws(SoundFontReadError) in
                if let data { return Array(data[(at - range.lowerBound)..<(at - range.lowerBound + 4)]) }
                return try load(list, at, 4)
            }
        }
        return found
    }

    mutating func readInfo(_ range: Range<Int>) throws(SoundFontReadError) {
        guard range.count <= 1 << 20 else {
            throw fail("INFO", range.lowerBound - 12, "the INFO list is \(range.count) bytes, more than 1 MiB")
        }
        let data = try load("INFO", range.lowerBound, range.count)
        for (id, body) in try subchunks("INFO", range, data) {
            let local = (body.lowerBound - range.lowerBound)..<(body.upperBound - range.lowerBound)
            switch id {
            case "ifil":
                guard body.count == 4 else {
                    throw fail("INFO/ifil", body.lowerBound - 8, "the version is \(body.count) bytes, not 4")
                }
                font.versionMajor = Int(u16(data, local.lowerBound))
                font.versionMinor = Int(u16(data, local.lowerBound + 2))
                guard font.versionMajor == 2 || font.versionMajor == 3 else {
                    throw fail(
                        "INFO/ifil", body.lowerBound,
                        "SoundFont version \(font.versionMajor).\(font.versionMinor): bellkeys reads versions 2 and 3",
                        fix: "convert the font to SoundFont 2 (for example with Polyphone)")
                }
            case "INAM": font.name = text(data, local)
            default: break
            }
        }
    }

    mutating func readSampleData(_ range: Range<Int>) throws(SoundFontReadError) {
        for (id, body) in try subchunks("sdta", range, nil) {
            if id == "smpl" { font.sampleData = body }
            if id == "sm24" { font.sampleLowBytes = body }
        }
        // sm24 counts from SoundFont 2.04 on, if it holds a byte per word of smpl (FluidSynth
        // ignores it otherwise).
        if let low = font.sampleLowBytes,
            low.count < font.sampleData.count / 2 || font.versionMajor != 2 || font.versionMinor < 4
        {
            font.sampleLowBytes = nil
        }
    }

    mutating func readPresetData(_ range: Range<Int>) throws(SoundFontReadError) {
        guard range.count <= 64 << 20 else {
            throw fail("pdta", range.lowerBound - 12, "the pdta list is \(range.count) bytes, more than 64 MiB")
        }
        let data = try load("pdta", range.lowerBound, range.count)
        var records: [String: (data: ArraySlice<UInt8>, offset: Int, count: Int)] = [:]
        for (id, body) in try subchunks("pdta", range, data) {
            guard let size = recordSizes[id] else { continue }
            guard body.count % size == 0 else {
                throw fail(
                    "pdta/\(id)", body.lowerBound - 8,
                    "the chunk is \(body.count) bytes, not a whole number of \(size)-byte records")
            }
            let local = (body.lowerBound - range.lowerBound)..<(body.upperBound - range.lowerBound)
            records[id] = (data[local], body.lowerBound, body.count / size)
        }
        for id in ["phdr", "pbag", "pmod", "pgen", "inst", "ibag", "imod", "igen", "shdr"] {
            guard let found = records[id] else {
                throw fail("pdta/\(id)", range.upperBound, "the pdta list has no \(id) chunk")
            }
            if ["phdr", "inst", "shdr", "pbag", "ibag"].contains(id), found.count < 1 {
                throw fail(
                    "pdta/\(id)", found.offset, "the \(id) chunk is empty (it needs at least its terminal record)")
            }
        }
        font.samples = try readSamples(records["shdr"]!)
        font.sampleHeadersOffset = records["shdr"]!.offset
        let instrumentHeaders = try headers(records["inst"]!, id: "inst", size: 22, indexAt: 20)
        for (name, _, range) in instrumentHeaders {
            let (global, zones) = try readZones(
                range, bags: records["ibag"]!, generators: records["igen"]!, modulators: records["imod"]!,
                level: "i", targets: font.samples.count)
            font.instruments.append(SoundFontInstrument(name: name, global: global, zones: zones))
        }
        let presetHeaders = try headers(records["phdr"]!, id: "phdr", size: 38, indexAt: 24)
        for (name, record, range) in presetHeaders {
            let (global, zones) = try readZones(
                range, bags: records["pbag"]!, generators: records["pgen"]!, modulators: records["pmod"]!,
                level: "p", targets: font.instruments.count + 1)
            font.presets.append(
                SoundFontPreset(
                    name: name, program: Int(u16(record, 20)), bank: Int(u16(record, 22)), global: global,
                    zones: zones))
        }
    }

    /// Named headers (presets or instruments, the terminal record left out) with their record
    /// and the range of bags each owns.
    func headers(_ chunk: (data: ArraySlice<UInt8>, offset: Int, count: Int), id: String, size: Int, indexAt: Int)
        throws(SoundFontReadError) -> [(String, [UInt8], Range<Int>)]
    {
        let data = Array(chunk.data)
        var result: [(String, [UInt8], Range<Int>)] = []
        for i in 0..<(chunk.count - 1) {
            let record = Array(data[(i * size)..<((i + 1) * size)])
            let first = Int(u16(record, indexAt)), next = Int(u16(data, (i + 1) * size + indexAt))
            guard first <= next else {
                throw fail(
                    "pdta/\(id)", chunk.offset + (i + 1) * size + indexAt,
                    "record \(i + 1)'s first zone (\(next)) comes before record \(i)'s (\(first))")
            }
            result.append((text(record, 0..<20), record, first..<next))
        }
        return result
    }

    /// The zones of one preset or instrument (`level` "p" or "i"), generators and modulators
    /// kept as FluidSynth keeps them; the first zone with no instrument (sample) is the global one.
    func readZones(
        _ range: Range<Int>, bags: (data: ArraySlice<UInt8>, offset: Int, count: Int),
        generators: (data: ArraySlice<UInt8>, offset: Int, count: Int),
        modulators: (data: ArraySlice<UInt8>, offset: Int, count: Int), level: String, targets: Int
    ) throws(SoundFontReadError) -> (SoundFontZone?, [SoundFontZone]) {
        let bagData = Array(bags.data), genData = Array(generators.data), modData = Array(modulators.data)
        let terminal = level == "p" ? SoundFontGenerator.instrument.rawValue : SoundFontGenerator.sampleID.rawValue
        var global: SoundFontZone?
        var zones: [SoundFontZone] = []
        for bag in range {
            guard bag + 1 < bags.count else {
                throw fail(
                    "pdta/\(level)bag", bags.offset + bag * 4,
                    "zone \(bag) is past the end of the \(level)bag chunk (\(bags.count) records)")
            }
            let genFirst = Int(u16(bagData, bag * 4)), genNext = Int(u16(bagData, bag * 4 + 4))
            let modFirst = Int(u16(bagData, bag * 4 + 2)), modNext = Int(u16(bagData, bag * 4 + 6))
            guard genFirst <= genNext, genNext <= generators.count, modFirst <= modNext, modNext <= modulators.count
            else {
                throw fail(
                    "pdta/\(level)bag", bags.offset + bag * 4,
                    "zone \(bag) names generators \(genFirst)..<\(genNext) and modulators \(modFirst)..<\(modNext), "
                        + "outside the \(generators.count) and \(modulators.count) there are")
            }
            var zone = SoundFontZone()
            for (position, g) in (genFirst..<genNext).enumerated() {
                let id = Int(u16(genData, g * 4)), amount = Int16(bitPattern: u16(genData, g * 4 + 2))
                if id == terminal {
                    guard Int(UInt16(bitPattern: amount)) < targets - 1 else {
                        throw fail(
                            "pdta/\(level)gen", generators.offset + g * 4,
                            "a zone names \(level == "p" ? "instrument" : "sample") \(UInt16(bitPattern: amount)), "
                                + "but there are only \(max(0, targets - 1))")
                    }
                    zone.target = Int(UInt16(bitPattern: amount))
                    break
                }
                guard let generator = SoundFontGenerator(rawValue: id) else { continue }
                if generator == .keyRange, position != 0 { continue }
                if generator == .velRange, position > 1 || (position == 1 && zone.generators[43] == nil) { continue }
                if generator == .instrument || generator == .sampleID { continue }
                if level == "p", generator.isInstrumentOnly { continue }
                zone.generators[id] = amount
            }
            for m in modFirst..<modNext {
                let base = m * 10
                let modulator = SoundFontModulator(
                    source: u16(modData, base), destination: u16(modData, base + 2),
                    amount: Int16(bitPattern: u16(modData, base + 4)), amountSource: u16(modData, base + 6),
                    transform: u16(modData, base + 8))
                // A later identical modulator replaces an earlier one (section 9.5.1).
                zone.modulators.removeAll { $0.isSame(as: modulator) }
                zone.modulators.append(modulator)
            }
            if zone.target != nil {
                zones.append(zone)
            } else if bag == range.lowerBound {
                global = zone
            }
        }
        return (global, zones)
    }

    func readSamples(_ chunk: (data: ArraySlice<UInt8>, offset: Int, count: Int)) throws(SoundFontReadError)
        -> [SoundFontSample]
    {
        let data = Array(chunk.data)
        return (0..<chunk.count).map { i in
            let r = i * 46
            return SoundFontSample(
                name: text(data, r..<(r + 20)), start: Int(u32(data, r + 20)), end: Int(u32(data, r + 24)),
                loopStart: Int(u32(data, r + 28)), loopEnd: Int(u32(data, r + 32)),
                sampleRate: Int(u32(data, r + 36)), originalPitch: Int(data[r + 40]),
                pitchCorrection: Int(Int8(bitPattern: data[r + 41])), link: Int(u16(data, r + 42)),
                type: Int(u16(data, r + 44)))
        }
    }
}

private func u16(_ data: [UInt8], _ at: Int) -> UInt16 { UInt16(data[at]) | UInt16(data[at + 1]) << 8 }
private func u32(_ data: [UInt8], _ at: Int) -> UInt32 {
    UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
}
private func tag(_ data: [UInt8], _ at: Int) -> String {
    String(decoding: data[at..<(at + 4)].map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}
/// A fixed-length name: up to its first zero byte, printable ASCII kept, anything else as "?".
private func text(_ data: [UInt8], _ range: Range<Int>) -> String {
    let bytes = data[range].prefix { $0 != 0 }
    let shown = bytes.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }
    return String(decoding: shown, as: UTF8.self).trimmingSpaces()
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
