import BellkeysModel

// The keys of a map: each entry of `keys` checked (MapFile.swift checks the rest of the map).

let keyFields = [
    "comment", "note", "tag", "sample", "gainDecibels", "pan", "noteOff",
    "releaseSeconds", "chokeGroup",
]

extension MapChecker {
    /// Key `i` of a map's `keys` (`noteOff` and `releaseSeconds` the map's, for a key that says
    /// neither); nil, with its problems said, if it is not a key. A note mapped twice is a
    /// problem at the second (`firstPathForNote` holds the first).
    mutating func checkKey(
        _ entry: JSONNode, at i: Int, noteOff: String, releaseSeconds: Double, firstPathForNote: inout [Int: String]
    ) -> MapKey? {
        let path = "keys[\(i)]"
        guard case .object(let fields) = entry.value else {
            problem(
                entry, path, "is \(entry.kindName), not an object",
                fix: "write each key as { \"note\": \"C4\", \"sample\": \"bell-C4.wav\" }")
            return nil
        }
        rejectUnknown(fields, allowed: keyFields, path: path)
        let note = keyNote(fields, entry: entry, path: path)
        let sampleNode = member(fields, "sample")
        var sample: String?
        if let sampleNode {
            if case .string(let s) = sampleNode.value, !s.isEmpty {
                sample = s
            } else {
                problem(
                    sampleNode, path + ".sample", "\(describe(sampleNode)) is not a file name",
                    fix: "give the sample file's path, relative to the map file, e.g. \"bell-C4.wav\"")
            }
        } else {
            problem(
                entry, path + ".sample", "the key has no \"sample\"",
                fix: "add \"sample\": \"FILE.wav\" (a path relative to the map file)")
        }
        let gain = number(fields, "gainDecibels", path: path, range: Instrument.volumeRange) ?? 0
        let mode = noteOffWord(fields, path: path) ?? noteOff
        let release =
            number(fields, "releaseSeconds", path: path, range: MapFile.releaseRange)
            ?? releaseSeconds
        let choke = integer(fields, "chokeGroup", path: path, range: MapFile.chokeGroupRange) ?? 0
        let pan = number(fields, "pan", path: path, range: MapFile.panRange) ?? 0
        guard let (midi, tag) = note, let sample, let sampleNode else { return nil }
        if let first = firstPathForNote[midi] {
            problem(
                entry, path, "\(noteName(midi)) (MIDI \(midi)) is already mapped by \(first)",
                fix: "map each note once: remove one of the two entries or change its note")
            return nil
        }
        firstPathForNote[midi] = path
        return MapKey(
            note: midi, tag: tag, sample: sample, path: prefix.isEmpty ? path : prefix + "." + path,
            sampleLine: sampleNode.line, sampleColumn: sampleNode.column,
            gainDecibels: gain,
            noteOff: mode == "damp" ? .damp(releaseSeconds: release) : .ring,
            chokeGroup: choke, pan: pan)
    }

    /// The note of a key entry: exactly one of `note` (name or MIDI number) and `tag`.
    mutating func keyNote(
        _ fields: [(key: String, value: JSONNode)], entry: JSONNode,
        path: String
    ) -> (Int, Int?)? {
        let noteNode = member(fields, "note"), tagNode = member(fields, "tag")
        let nameFix =
            "write a note name like \"C4\", \"C#4\" or \"Db4\" (C4 is middle C, MIDI 60), a MIDI number 0-127, or use \"tag\": 100-112"
        switch (noteNode, tagNode) {
        case (nil, nil):
            problem(
                entry, path, "the key has neither \"note\" nor \"tag\"",
                fix: "add \"note\": \"C4\" (or a MIDI number), or \"tag\": 100 for the tutorial's first button")
            return nil
        case (.some, .some):
            problem(
                tagNode, path + ".tag", "the key has both \"note\" and \"tag\"",
                fix: "keep one of them: a tag stands for a note (100 = C4 ... 112 = C5)")
            return nil
        case (let node?, nil):
            switch node.value {
            case .string(let name):
                if let midi = midiNote(named: name) { return (midi, nil) }
                problem(node, path + ".note", "\"\(name)\" is not a note name", fix: nameFix)
            case .number(let n):
                if n == n.rounded(), (0...127).contains(n) { return (Int(n), nil) }
                problem(node, path + ".note", "\(formatNumber(n)) is not a MIDI note number 0-127", fix: nameFix)
            default:
                problem(node, path + ".note", "is \(describe(node)), not a note", fix: nameFix)
            }
            return nil
        case (nil, let node?):
            // Int(exactly:): a tag too large for an Int is an error to report, not a trap.
            if case .number(let n) = node.value, let tag = Int(exactly: n), let midi = midiNote(tag: tag) {
                return (midi, tag)
            }
            problem(
                node, path + ".tag", "\(describe(node)) is not a tutorial button tag",
                fix: "tags run from 100 (C4) to 112 (C5); for other notes use \"note\"")
            return nil
        }
    }
}
