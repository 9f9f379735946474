import BellkeysFormats

/// Writes small SoundFont 2 (and SF3) files for the tests and the fuzzer's rules: samples,
/// instruments and presets with any generators and modulators, laid out as SoundFont 2.04
/// sections 4 to 8 have them (46 zero words after each sample).
public struct SoundFontBuilder {
    public struct Sample {
        public var name: String
        public var frames: [Int16]
        public var rate: Int
        public var root: Int
        public var correction: Int
        /// Loop start and the word after the loop end, in frames from the sample's start.
        public var loop: Range<Int>?
        /// 1 mono, 2 right, 4 left; `link`: the other side's sample number.
        public var type: Int
        public var link: Int
        /// The low bytes of 24-bit frames (`sm24`), if any sample has them.
        public var lowBytes: [UInt8]?
        /// An SF3 sample: an Ogg Vorbis stream in place of `frames`.
        public var compressed: [UInt8]?

        public init(
            name: String, frames: [Int16], rate: Int = 48_000, root: Int = 60, correction: Int = 0,
            loop: Range<Int>? = nil, type: Int = 1, link: Int = 0, lowBytes: [UInt8]? = nil, compressed: [UInt8]? = nil
        ) {
            self.name = name
            self.frames = frames
            self.rate = rate
            self.root = root
            self.correction = correction
            self.loop = loop
            self.type = type
            self.link = link
            self.lowBytes = lowBytes
            self.compressed = compressed
        }
    }

    /// A zone: generators in the order given (the instrument or sample number is added last),
    /// modulators, and what it plays (nil: a global zone).
    public struct Zone {
        public var generators: [(SoundFontGenerator, Int)]
        public var modulators: [SoundFontModulator]
        public var target: Int?

        public init(_ generators: [(SoundFontGenerator, Int)] = [], modulators: [SoundFontModulator] = [], target: Int?)
        {
            self.generators = generators
            self.modulators = modulators
            self.target = target
        }
    }

    public struct Instrument {
        public var name: String
        public var zones: [Zone]
        public init(name: String, zones: [Zone]) {
            self.name = name
            self.zones = zones
        }
    }

    public struct Preset {
        public var name: String
        public var bank: Int
        public var program: Int
        public var zones: [Zone]
        public init(name: String, bank: Int = 0, program: Int, zones: [Zone]) {
            self.name = name
            self.bank = bank
            self.program = program
            self.zones = zones
        }
    }

    public var samples: [Sample]
    public var instruments: [Instrument]
    public var presets: [Preset]
    public var name = "bellkeys test font"
    /// `ifil`: 2.4 writes `sm24` when a sample has low bytes; 3.x is an SF3 file.
    public var versionMajor = 2, versionMinor = 4
    /// The name's chunk at an odd size (a name of an even length and its zero), with RIFF's
    /// pad byte after it (true) or without (false, as MuseScore's fonts have it); nil: even.
    public var oddNamePadded: Bool?

    public init(samples: [Sample], instruments: [Instrument], presets: [Preset]) {
        self.samples = samples
        self.instruments = instruments
        self.presets = presets
    }

    /// A range generator's amount (low key or velocity, high).
    public static func range(_ low: Int, _ high: Int) -> Int { low | high << 8 }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        var smpl: [UInt8] = [], sm24: [UInt8] = [], shdr: [UInt8] = []
        let hasLow = samples.contains { $0.lowBytes != nil }
        for sample in samples {
            let start: Int, end: Int
            if let compressed = sample.compressed {
                start = smpl.count
                smpl += compressed
                end = smpl.count
            } else {
                start = smpl.count / 2
                for x in sample.frames { smpl += le16(Int(UInt16(bitPattern: x))) }
                end = smpl.count / 2
                smpl += [UInt8](repeating: 0, count: 92)
                if hasLow {
                    sm24 += sample.lowBytes ?? [UInt8](repeating: 0, count: sample.frames.count)
                    sm24 += [UInt8](repeating: 0, count: 46)
                }
            }
            let base = sample.compressed == nil ? start : 0
            let loop = sample.loop ?? 0..<0
            shdr += name20(sample.name) + le32(start) + le32(end) + le32(base + loop.lowerBound)
            shdr +=
                le32(base + loop.upperBound) + le32(sample.rate) + [
                    UInt8(sample.root), UInt8(bitPattern: Int8(sample.correction)),
                ]
            shdr += le16(sample.link) + le16(sample.type | (sample.compressed == nil ? 0 : 0x10))
        }
        if smpl.count % 2 == 1 { smpl.append(0) }
        if sm24.count % 2 == 1 { sm24.append(0) }
        shdr += name20("EOS") + [UInt8](repeating: 0, count: 26)

        func zoneRecords(_ zones: [[Zone]], terminal: SoundFontGenerator) -> (
            bag: [UInt8], gen: [UInt8], mod: [UInt8], first: [Int]
        ) {
            var bag: [UInt8] = [], gen: [UInt8] = [], mod: [UInt8] = [], first: [Int] = []
            var gens = 0, mods = 0, bags = 0
            for owner in zones {
                first.append(bags)
                for zone in owner {
                    bag += le16(gens) + le16(mods)
                    bags += 1
                    for (generator, amount) in zone.generators {
                        gen += le16(generator.rawValue) + le16(Int(UInt16(truncatingIfNeeded: amount)))
                        gens += 1
                    }
                    if let target = zone.target {
                        gen += le16(terminal.rawValue) + le16(target)
                        gens += 1
                    }
                    for m in zone.modulators {
                        mod += le16(Int(m.source)) + le16(Int(m.destination))
                        mod +=
                            le16(Int(UInt16(bitPattern: m.amount))) + le16(Int(m.amountSource)) + le16(Int(m.transform))
                        mods += 1
                    }
                }
            }
            first.append(bags)
            bag += le16(gens) + le16(mods)
            gen += [0, 0, 0, 0]
            mod += [UInt8](repeating: 0, count: 10)
            return (bag, gen, mod, first)
        }
        let i = zoneRecords(instruments.map(\.zones), terminal: .sampleID)
        var inst: [UInt8] = []
        for (k, instrument) in instruments.enumerated() { inst += name20(instrument.name) + le16(i.first[k]) }
        inst += name20("EOI") + le16(i.first.last!)
        let p = zoneRecords(presets.map(\.zones), terminal: .instrument)
        var phdr: [UInt8] = []
        for (k, preset) in presets.enumerated() {
            phdr += name20(preset.name) + le16(preset.program) + le16(preset.bank) + le16(p.first[k])
            phdr += [UInt8](repeating: 0, count: 12)
        }
        phdr += name20("EOP") + le16(0) + le16(0) + le16(p.first.last!) + [UInt8](repeating: 0, count: 12)

        var nameChunk = chunk("INAM", zstring(name))
        if let padded = oddNamePadded {
            precondition(name.utf8.count % 2 == 0, "an odd chunk needs a name of even length")
            nameChunk = chunk("INAM", Array(name.utf8) + [0]) + (padded ? [0] : [])
        }
        let info = list("INFO", [chunk("ifil", le16(versionMajor) + le16(versionMinor)), nameChunk])
        let sdta = list("sdta", [chunk("smpl", smpl)] + (hasLow ? [chunk("sm24", sm24)] : []))
        let pdta = list(
            "pdta",
            [
                chunk("phdr", phdr), chunk("pbag", p.bag), chunk("pmod", p.mod), chunk("pgen", p.gen),
                chunk("inst", inst), chunk("ibag", i.bag), chunk("imod", i.mod), chunk("igen", i.gen),
                chunk("shdr", shdr),
            ])
        let body = Array("sfbk".utf8) + info + sdta + pdta
        return Array("RIFF".utf8) + le32(body.count) + body
    }
}

private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
private func le32(_ v: Int) -> [UInt8] {
    [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
}
private func name20(_ s: String) -> [UInt8] {
    Array((Array(s.utf8.prefix(19)) + [UInt8](repeating: 0, count: 20)).prefix(20))
}
private func zstring(_ s: String) -> [UInt8] {
    var bytes = Array(s.utf8) + [0]
    if bytes.count % 2 == 1 { bytes.append(0) }
    return bytes
}
private func chunk(_ id: String, _ data: [UInt8]) -> [UInt8] { Array(id.utf8) + le32(data.count) + data }
private func list(_ type: String, _ parts: [[UInt8]]) -> [UInt8] {
    let body = Array(type.utf8) + parts.flatMap { $0 }
    return Array("LIST".utf8) + le32(body.count) + body
}
