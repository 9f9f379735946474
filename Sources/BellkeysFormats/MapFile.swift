import BellkeysModel

let topFields = [
    "comment", "masterVolumeDecibels", "velocityCurve", "polyphony",
    "unmappedNotes", "noteOff", "releaseSeconds", "reverb", "reverbMix", "velocityTimbre", "pitchBend", "instrument",
    "soundfont", "bank", "program", "quality", "transpose", "keys",
]

/// Parses and validates a map file. Checks everything that can be checked without reading
/// the sample files; problems are collected, not stopped at the first.
/// - Parameter file: the name to use in messages (the path as the user gave it).
public func parseMapFile(_ bytes: [UInt8], file: String) throws(InstrumentError) -> MapFile {
    let root: JSONNode
    do {
        root = try parseJSON(bytes)
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: file, line: error.line, column: error.column, path: "",
                message: "not valid JSON: \(error.message)",
                fix: "correct the JSON syntax at that position (man 5 bellkeys-map, or docs/map.md, has a full example)"
            )
        ])
    }
    var checker = MapChecker(file: file)
    let map = checker.check(root)
    if !checker.problems.isEmpty { throw InstrumentError(checker.problems) }
    return map!
}

struct MapChecker {
    let file: String
    var problems: [InstrumentProblem] = []
    /// The JSON path of the object being checked (`sets[2]` for a set's own fields; empty for
    /// the map's top level), put before every problem's path.
    var prefix = ""

    mutating func problem(_ node: JSONNode?, _ path: String, _ message: String, fix: String) {
        let full = prefix.isEmpty ? path : (path.isEmpty ? prefix : prefix + "." + path)
        problems.append(
            InstrumentProblem(
                file: file, line: node?.line, column: node?.column, path: full,
                message: message, fix: fix))
    }

    mutating func check(_ root: JSONNode) -> MapFile? {
        guard case .object(let members) = root.value else {
            problem(
                root, "", "the top level is \(root.kindName), not an object",
                fix: "write the map as { \"keys\": [ ... ] } (see man 5 bellkeys-map, or docs/map.md)")
            return nil
        }
        if member(members, "sets") != nil { return checkSets(root, members) }
        return checkInstrument(root, members, allowed: topFields)
    }

    /// A map of one instrument (or a set's own fields, `allowed` then the set's).
    mutating func checkInstrument(
        _ root: JSONNode, _ members: [(key: String, value: JSONNode)], allowed: [String], setPreset: Bool = false
    ) -> MapFile? {
        rejectUnknown(members, allowed: allowed, path: "")
        let master = number(members, "masterVolumeDecibels", path: "", range: Instrument.volumeRange) ?? 0
        let curve = choice(members, "velocityCurve", path: "", VelocityCurve.self) ?? .square
        let polyphony =
            integer(members, "polyphony", path: "", range: MapFile.polyphonyRange)
            ?? MapFile.defaultPolyphony
        let unmapped = choice(members, "unmappedNotes", path: "", UnmappedNotes.self) ?? .ignore
        let room = choice(members, "reverb", path: "", ReverbPreset.self) ?? .off
        let roomMix = number(members, "reverbMix", path: "", range: MapFile.reverbMixRange) ?? ReverbSettings.defaultMix
        let timbre = number(members, "velocityTimbre", path: "", range: MapFile.velocityTimbreRange) ?? 0
        let (instrumentFile, instrumentNode, soundFontFile, soundFontNode) = checkNamedFiles(members)
        // (A set's bank and program choose the set; its preset is the caller's.)
        let bank = setPreset ? 0 : integer(members, "bank", path: "", range: MapFile.bankRange) ?? 0
        let program = setPreset ? 0 : integer(members, "program", path: "", range: MapFile.programRange) ?? 0
        for field in ["bank", "program"] where soundFontNode == nil && !setPreset {
            if let node = member(members, field) {
                problem(
                    node, field, "\(field) chooses a SoundFont's preset, and the map names no SoundFont",
                    fix: "add \"soundfont\": \"FILE.sf2\", or leave \(field) out")
            }
        }
        let quality = choice(members, "quality", path: "", InterpolationQuality.self)
        let transpose = integer(members, "transpose", path: "", range: MapFile.transposeRange) ?? 0
        let playsRegions = instrumentNode != nil || soundFontNode != nil
        if playsRegions, let timbre = member(members, "velocityTimbre") {
            problem(
                timbre, "velocityTimbre", "velocity timbre plays on a map's keys, not on an instrument's regions",
                fix:
                    "leave velocityTimbre out, and give the instrument's regions fil_veltrack (a filter that opens with velocity)"
            )
        }
        let bends = boolean(members, "pitchBend", path: "") ?? playsRegions
        let defaultMode = noteOffWord(members, path: "") ?? "ring"
        let defaultRelease =
            number(members, "releaseSeconds", path: "", range: MapFile.releaseRange)
            ?? MapFile.defaultReleaseSeconds

        var keys: [MapKey] = []
        let given = Set(members.map(\.key))
        /// The map with these keys (and the fields read above).
        func made(keys: [MapKey], velocityTimbre: Double) -> MapFile {
            var map = MapFile(
                masterVolumeDecibels: master, velocityCurve: curve, polyphony: polyphony,
                unmappedNotes: unmapped, reverb: ReverbSettings(preset: room, mix: roomMix),
                velocityTimbre: velocityTimbre, pitchBend: bends, keys: keys)
            map.instrument = instrumentFile
            map.instrumentLine = instrumentNode?.line ?? 0
            map.instrumentColumn = instrumentNode?.column ?? 0
            map.soundFont = soundFontFile
            map.bank = bank
            map.program = program
            if let soundFontNode {
                map.instrumentLine = soundFontNode.line
                map.instrumentColumn = soundFontNode.column
            }
            map.quality = quality
            map.transpose = transpose
            map.givenFields = given
            map.defaultNoteOff = defaultMode == "damp" ? .damp(releaseSeconds: defaultRelease) : .ring
            map.defaultReleaseSeconds = defaultRelease
            return map
        }
        if playsRegions, member(members, "keys") == nil { return made(keys: [], velocityTimbre: 0) }
        guard let keysNode = member(members, "keys") else {
            problem(
                root, "keys", "the map has no \"keys\" array",
                fix:
                    "add \"keys\": [ { \"note\": \"C4\", \"sample\": \"bell-C4.wav\" }, ... ], \"instrument\": \"FILE.sfz\" or \"soundfont\": \"FILE.sf2\""
            )
            return nil
        }
        guard case .array(let entries) = keysNode.value else {
            problem(
                keysNode, "keys", "is \(keysNode.kindName), not an array",
                fix: "write \"keys\": [ { \"note\": \"C4\", \"sample\": \"bell-C4.wav\" }, ... ]")
            return nil
        }
        if entries.isEmpty {
            problem(keysNode, "keys", "is empty", fix: "map at least one key to a sample")
        }
        var firstPathForNote: [Int: String] = [:]
        for (i, entry) in entries.enumerated() {
            if let key = checkKey(
                entry, at: i, noteOff: defaultMode, releaseSeconds: defaultRelease, firstPathForNote: &firstPathForNote)
            {
                keys.append(key)
            }
        }
        return made(keys: keys, velocityTimbre: timbre)
    }

    /// `instrument` (an SFZ file) and `soundfont` (an .sf2 or .sf3 file) of a map: the names
    /// given, if they are such names, and where they stand; both given is a problem.
    mutating func checkNamedFiles(_ members: [(key: String, value: JSONNode)]) -> (
        instrument: String?, instrumentNode: JSONNode?, soundFont: String?, soundFontNode: JSONNode?
    ) {
        let instrumentNode = member(members, "instrument")
        var instrumentFile: String?
        if let instrumentNode {
            if case .string(let s) = instrumentNode.value, s.lowercased().hasSuffix(".sfz") {
                instrumentFile = s
            } else {
                problem(
                    instrumentNode, "instrument", "\(describe(instrumentNode)) is not an SFZ file's name",
                    fix: "give the .sfz file's path, relative to the map file, e.g. \"TubularBells.sfz\"")
            }
        }
        let soundFontNode = member(members, "soundfont")
        var soundFontFile: String?
        if let soundFontNode {
            let name: String? = if case .string(let s) = soundFontNode.value { s } else { nil }
            if let name, [".sf2", ".sf3"].contains(where: { name.lowercased().hasSuffix($0) }) {
                soundFontFile = name
            } else {
                problem(
                    soundFontNode, "soundfont", "\(describe(soundFontNode)) is not a SoundFont's name",
                    fix: "give the .sf2 or .sf3 file's path, e.g. \"/usr/share/sounds/sf2/FluidR3_GM.sf2\"")
            }
            if instrumentNode != nil {
                problem(
                    soundFontNode, "soundfont", "a map plays an SFZ instrument or a SoundFont preset, not both",
                    fix: "leave out \"instrument\" or \"soundfont\"")
            }
        }
        return (instrumentFile, instrumentNode, soundFontFile, soundFontNode)
    }

    mutating func rejectUnknown(_ members: [(key: String, value: JSONNode)], allowed: [String], path: String) {
        for (key, node) in members where !allowed.contains(key) {
            // Near a whole field name, or near its start ("gain" for "gainDecibels").
            func distance(_ field: String) -> Int {
                min(editDistance(field, key), editDistance(String(field.prefix(key.count)), key))
            }
            let near = allowed.min { distance($0) < distance($1) }!
            let hint = key.count >= 3 && distance(near) <= max(2, key.count / 3) ? "did you mean \"\(near)\"? " : ""
            problem(
                node, path.isEmpty ? key : path + "." + key, "unknown field \"\(key)\"",
                fix: "\(hint)fields here are: \(allowed.joined(separator: ", "))")
        }
    }

    mutating func number(
        _ members: [(key: String, value: JSONNode)], _ name: String, path: String,
        range: ClosedRange<Double>
    ) -> Double? {
        guard let node = member(members, name) else { return nil }
        let full = path.isEmpty ? name : path + "." + name
        guard case .number(let n) = node.value else {
            let message =
                if case .string = node.value { "\(describe(node)) is a string, not a number" } else {
                    "\(describe(node)) is not a number"
                }
            problem(
                node, full, message,
                fix:
                    "write a number from \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound)), without quotes"
            )
            return nil
        }
        guard range.contains(n) else {
            problem(
                node, full, "\(formatNumber(n)) is out of range",
                fix: "use a number from \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound))")
            return nil
        }
        return n
    }

    mutating func integer(
        _ members: [(key: String, value: JSONNode)], _ name: String, path: String,
        range: ClosedRange<Int>
    ) -> Int? {
        guard let node = member(members, name) else { return nil }
        let full = path.isEmpty ? name : path + "." + name
        guard case .number(let n) = node.value, n == n.rounded(), n >= Double(range.lowerBound),
            n <= Double(range.upperBound)
        else {
            problem(
                node, full, "\(describe(node)) is not a whole number from \(range.lowerBound) to \(range.upperBound)",
                fix: "write a whole number from \(range.lowerBound) to \(range.upperBound), without quotes")
            return nil
        }
        return Int(n)
    }

    mutating func choice<T: RawRepresentable & CaseIterable>(
        _ members: [(key: String, value: JSONNode)], _ name: String, path: String, _ type: T.Type
    ) -> T? where T.RawValue == String {
        guard let node = member(members, name) else { return nil }
        let words = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        if case .string(let s) = node.value, let value = T(rawValue: s) { return value }
        problem(
            node, path.isEmpty ? name : path + "." + name, "\(describe(node)) is not one of \(words)",
            fix: "use one of \(words)")
        return nil
    }

    mutating func boolean(_ members: [(key: String, value: JSONNode)], _ name: String, path: String) -> Bool? {
        guard let node = member(members, name) else { return nil }
        if case .bool(let b) = node.value { return b }
        problem(
            node, path.isEmpty ? name : path + "." + name, "\(describe(node)) is not true or false",
            fix: "write true or false, without quotes")
        return nil
    }

    mutating func noteOffWord(_ members: [(key: String, value: JSONNode)], path: String) -> String? {
        guard let node = member(members, "noteOff") else { return nil }
        if case .string(let s) = node.value, s == "ring" || s == "damp" { return s }
        problem(
            node, path.isEmpty ? "noteOff" : path + ".noteOff", "\(describe(node)) is not \"ring\" or \"damp\"",
            fix:
                "use \"ring\" (the bell rings out, note-off is ignored) or \"damp\" (note-off fades it over releaseSeconds)"
        )
        return nil
    }

    func member(_ members: [(key: String, value: JSONNode)], _ name: String) -> JSONNode? {
        members.first { $0.key == name }?.value
    }

    func describe(_ node: JSONNode) -> String {
        switch node.value {
        case .string(let s): "\"\(s)\""
        case .number(let n): formatNumber(n)
        case .bool(let b): "\(b)"
        case .null: "null"
        default: node.kindName
        }
    }
}

/// A number as a person would write it: no ".0" on whole numbers.
public func formatNumber(_ n: Double) -> String {
    if n == n.rounded(), abs(n) < 1e15 { return String(Int(n)) }
    return "\(n)"
}

func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var row = [i] + [Int](repeating: 0, count: b.count)
        for j in 1...b.count {
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = row
    }
    return previous[b.count]
}
