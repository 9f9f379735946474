import BellkeysModel

// A map of several sets (`"sets": [...]`), read by the same checker as a map of one instrument:
// each set is a map's fields of its own, or a file, with a name and the program that chooses it.

/// The fields of a map of sets, at its top level.
let setsMapFields = ["comment", "sets", "polyphony", "quality", "masterVolumeDecibels", "transpose"]
/// A set's own fields; besides them, a set may give any field of a map of one instrument
/// except those of the top level only (`polyphony`, `quality`, `transpose`), with `program` and `bank`
/// choosing the set (a SoundFont's preset is `preset`, else the same numbers).
let setOwnFields = ["name", "program", "bank", "channels", "map", "preset"]

extension MapChecker {
    mutating func checkSets(_ root: JSONNode, _ members: [(key: String, value: JSONNode)]) -> MapFile? {
        rejectUnknown(members, allowed: setsMapFields, path: "")
        let polyphony =
            integer(members, "polyphony", path: "", range: MapFile.polyphonyRange) ?? MapFile.defaultPolyphony
        let quality = choice(members, "quality", path: "", InterpolationQuality.self)
        let transpose = integer(members, "transpose", path: "", range: MapFile.transposeRange) ?? 0
        let master = number(members, "masterVolumeDecibels", path: "", range: Instrument.volumeRange) ?? 0
        let setsNode = member(members, "sets")!
        guard case .array(let entries) = setsNode.value, !entries.isEmpty else {
            problem(
                setsNode, "sets", "is \(describe(setsNode)), not a list of sets",
                fix: "write \"sets\": [ { \"name\": \"Handbells\", \"program\": 0, \"map\": \"handbells.json\" }, ... ]"
            )
            return nil
        }
        if entries.count > MapFile.maximumSets {
            problem(
                setsNode, "sets", "holds \(entries.count) sets, more than \(MapFile.maximumSets)",
                fix: "split the sets between maps of at most \(MapFile.maximumSets) (one per program number)")
            return nil
        }
        let instrumentFields = topFields.filter {
            !["polyphony", "quality", "transpose", "bank", "program"].contains($0)
        }
        var sets: [MapSet] = []
        var names: [String: String] = [:], choices: [String: String] = [:], channelOwners: [Int: String] = [:]
        for (i, entry) in entries.enumerated() {
            let path = "sets[\(i)]"
            guard case .object(let fields) = entry.value else {
                problem(
                    entry, path, "is \(entry.kindName), not an object",
                    fix: "write each set as { \"name\": \"Handbells\", \"program\": 0, \"map\": \"handbells.json\" }")
                continue
            }
            let name = setName(fields, entry: entry, path: path)
            let programNode = member(fields, "program")
            let program = integer(fields, "program", path: path, range: MapFile.programRange)
            if programNode == nil {
                problem(
                    entry, path + ".program", "the set has no \"program\"",
                    fix: "add \"program\": N, the program change (0 to 127, as sent on the wire) that chooses the set")
            }
            let bank = integer(fields, "bank", path: path, range: MapFile.bankRange)
            let channels = setChannels(fields, path: path)
            let (presetBank, presetProgram) = setPreset(fields, path: path, bank: bank ?? 0, program: program ?? 0)
            let (file, own) = setInstrument(
                fields, entry: entry, path: path, preset: (presetBank, presetProgram), allowed: instrumentFields)
            guard let name, let program else { continue }
            if let first = names[name.lowercased()] {
                problem(
                    entry, path + ".name", "\"\(name)\" is already the name of \(first)",
                    fix: "give each set a name of its own")
                continue
            }
            let key = "\(bank.map(String.init) ?? "any"):\(program)"
            if let first = choices[key] {
                problem(
                    programNode, path + ".program",
                    "program \(program)\(bank.map { " in bank \($0)" } ?? "") already chooses \(first)",
                    fix: "give each set a program (or a bank) of its own")
                continue
            }
            for channel in channels {
                if let first = channelOwners[channel] {
                    problem(
                        entry, path + ".channels", "channel \(channel + 1) already starts on \(first)",
                        fix: "name each channel in one set's \"channels\" at most")
                }
                channelOwners[channel] = "\(path) (\(name))"
            }
            names[name.lowercased()] = "\(path)"
            choices[key] = "\(path) (\(name))"
            sets.append(
                MapSet(
                    name: name, program: program, bank: bank, channels: channels, map: own, file: file,
                    presetBank: presetBank, presetProgram: presetProgram, path: path, line: entry.line,
                    column: entry.column))
        }
        var map = MapFile(
            masterVolumeDecibels: master, velocityCurve: .square, polyphony: polyphony, unmappedNotes: .ignore, keys: []
        )
        map.quality = quality
        map.transpose = transpose
        map.givenFields = Set(members.map(\.key))
        map.sets = sets
        return map
    }

    /// A set's `name`: 1 to 40 characters on one line.
    mutating func setName(_ fields: [(key: String, value: JSONNode)], entry: JSONNode, path: String) -> String? {
        var name: String?
        if let node = member(fields, "name") {
            if case .string(let s) = node.value, !s.isEmpty, s.count <= 40, !s.contains(where: \.isNewline) {
                name = s
            } else {
                problem(
                    node, path + ".name", "\(describe(node)) is not a set's name",
                    fix: "give a name of 1 to 40 characters on one line, e.g. \"Handbells\"")
            }
        } else {
            problem(
                entry, path + ".name", "the set has no \"name\"",
                fix: "add \"name\": \"Handbells\" (shown when the set is chosen)")
        }
        return name
    }

    /// A set's `channels`: MIDI channels 1 to 16 as written, 0 to 15 as returned, each once.
    mutating func setChannels(_ fields: [(key: String, value: JSONNode)], path: String) -> [Int] {
        var channels: [Int] = []
        if let node = member(fields, "channels") {
            let fix = "write the MIDI channels (1 to 16) that start on this set, e.g. \"channels\": [10]"
            if case .array(let items) = node.value {
                for item in items {
                    if case .number(let n) = item.value, n == n.rounded(), (1...16).contains(n) {
                        if channels.contains(Int(n) - 1) {
                            problem(
                                item, path + ".channels", "channel \(Int(n)) is listed twice",
                                fix: "list each channel once")
                        } else {
                            channels.append(Int(n) - 1)
                        }
                    } else {
                        problem(
                            item, path + ".channels", "\(describe(item)) is not a MIDI channel 1 to 16", fix: fix)
                    }
                }
            } else {
                problem(node, path + ".channels", "is \(describe(node)), not a list of channels", fix: fix)
            }
        }
        return channels
    }

    /// A set's SoundFont preset: its `preset`, else the set's own `bank` and `program`.
    mutating func setPreset(_ fields: [(key: String, value: JSONNode)], path: String, bank: Int, program: Int) -> (
        bank: Int, program: Int
    ) {
        var presetBank = bank, presetProgram = program
        if let node = member(fields, "preset") {
            let fix = "write \"preset\": { \"bank\": 0, \"program\": 14 } (a preset of the set's \"soundfont\")"
            if case .object(let numbers) = node.value {
                rejectUnknown(numbers, allowed: ["bank", "program"], path: path + ".preset")
                presetBank = integer(numbers, "bank", path: path + ".preset", range: MapFile.bankRange) ?? 0
                presetProgram =
                    integer(numbers, "program", path: path + ".preset", range: MapFile.programRange) ?? 0
            } else {
                problem(node, path + ".preset", "is \(describe(node)), not a preset", fix: fix)
            }
            if member(fields, "soundfont") == nil, member(fields, "map") == nil {
                problem(
                    node, path + ".preset", "a preset chooses from a SoundFont, and the set names none",
                    fix: "add \"soundfont\": \"FILE.sf2\", or leave \"preset\" out")
            }
        }
        return (presetBank, presetProgram)
    }

    /// A set's instrument: the file its `map` names, or its own fields (`allowed`, and the set's),
    /// checked as a map's; a SoundFont among them plays `preset`.
    mutating func setInstrument(
        _ fields: [(key: String, value: JSONNode)], entry: JSONNode, path: String, preset: (bank: Int, program: Int),
        allowed: [String]
    ) -> (file: String?, own: MapFile?) {
        var file: String?, own: MapFile?
        if let node = member(fields, "map") {
            rejectUnknown(fields, allowed: setOwnFields + ["comment"], path: path)
            if case .string(let s) = node.value, !s.isEmpty {
                file = s
            } else {
                problem(
                    node, path + ".map", "\(describe(node)) is not a file name",
                    fix: "give a map, an .sfz file or a SoundFont, relative to this map, e.g. \"handbells.json\"")
            }
        } else {
            let outer = prefix
            prefix = path
            own = checkInstrument(entry, fields, allowed: allowed + setOwnFields, setPreset: true)
            prefix = outer
            own?.jsonPath = path
            if var made = own, made.soundFont != nil {
                made.bank = preset.bank
                made.program = preset.program
                made.givenFields.formUnion(["bank", "program"])
                own = made
            }
        }
        return (file, own)
    }
}
