// A SoundFont's structure read from its bytes (the model: SoundFontModel.swift).

/// Reads a SoundFont's structure (not its sample data). A broken or truncated file is an error
/// that names the file, the chunk, the byte and the fix.
public func parseSoundFont(_ bytes: SoundFontBytes, file: String) throws(InstrumentError) -> SoundFont {
    var reader = SoundFontReader(bytes: bytes, file: file)
    do {
        return try reader.read()
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: file, line: nil, column: nil, byte: error.offset, path: error.chunk, message: error.message,
                fix: error.fix)
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
        let instrumentHeaders = try headers(
            records["inst"]!, id: "inst", size: 22, indexAt: 20, bags: (id: "ibag", count: records["ibag"]!.count))
        for (name, _, range) in instrumentHeaders {
            let (global, zones) = try readZones(
                range, bags: records["ibag"]!, generators: records["igen"]!, modulators: records["imod"]!,
                level: "i", targets: font.samples.count)
            font.instruments.append(SoundFontInstrument(name: name, global: global, zones: zones))
        }
        let presetHeaders = try headers(
            records["phdr"]!, id: "phdr", size: 38, indexAt: 24, bags: (id: "pbag", count: records["pbag"]!.count))
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
    /// and the range of bags each owns, within the `bags` chunk's records (its terminal one ends
    /// the last zone).
    func headers(
        _ chunk: (data: ArraySlice<UInt8>, offset: Int, count: Int), id: String, size: Int, indexAt: Int,
        bags: (id: String, count: Int)
    ) throws(SoundFontReadError) -> [(String, [UInt8], Range<Int>)] {
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
            guard next < bags.count else {
                throw fail(
                    "pdta/\(id)", chunk.offset + (i + 1) * size + indexAt,
                    "record \(i)'s zones run to \(next), past the \(bags.count) records of the \(bags.id) chunk")
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
                    "pdta/\(level)bag", bags.offset + max(0, bags.count - 1) * 4,
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
