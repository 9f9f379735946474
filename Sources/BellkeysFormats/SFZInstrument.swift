// From an SFZ file's statements to its regions: the headers' scopes and resets, inheritance,
// <control>'s paths and offsets, and the checks that need a whole region.

/// Parses an SFZ file into its regions, every opcode resolved. Thread: any (no I/O of its own).
///
/// `read` returns the bytes of an #include'd file, given its path relative to the TOP file's
/// folder with `\` turned into `/` (as sfizz does), or absolute; it throws if it cannot.
/// Errors are collected where the file can be read on (bad values, a region without a sample)
/// and thrown together; a syntax error (an unclosed comment or header, a line that is not
/// `name=value`, a bad #define or #include, an unknown header) is thrown at once. Unsupported
/// opcodes and headers are warnings, not errors.
/// - Parameter file: the name to use in messages (the path as the user gave it); its folder is
///   where #include and the samples are found.
public func parseSFZ(
    _ bytes: [UInt8], file: String, read: (String) throws -> [UInt8]
) throws(InstrumentError) -> SFZInstrumentDescription {
    let syntax = try readSFZStatements(bytes, file: file, read: read)
    var builder = SFZInstrumentBuilder()
    for statement in syntax.statements { builder.take(statement) }
    builder.endRegion()
    if !builder.problems.isEmpty { throw InstrumentError(builder.problems) }
    guard !builder.regions.isEmpty else {
        throw InstrumentError([
            InstrumentProblem(
                file: file, line: nil, column: nil, path: "", message: "the file has no <region>",
                fix: "add a region: <region> sample=FILE.wav lokey=60 hikey=62 pitch_keycenter=61")
        ])
    }
    return SFZInstrumentDescription(
        regions: builder.regions, warnings: builder.warnings, includedFiles: syntax.includedFiles,
        controllerDefaults: builder.controllerDefaults)
}

/// An opcode as the builder reads it.
struct SFZOpcode {
    var name: String
    var value: String
    var location: SFZLocation
    var valueLocation: SFZLocation
}

/// A region being resolved: the region, and what is summed or merged only when it is complete.
struct SFZRegionDraft {
    var region: SFZRegion
    var sample: (value: String, location: SFZLocation)?
    var globalVolume = 0.0, masterVolume = 0.0, groupVolume = 0.0
    var velocityCurve: [Int: Double] = [:]
    var loCC: [Int: Int] = [:], hiCC: [Int: Int] = [:]
}

/// One opcode's effect on a region, checked and typed when the opcode is read (so a bad value
/// in a <group> is reported once, not once per region).
typealias SFZSetter = (inout SFZRegionDraft) -> Void

struct SFZInstrumentBuilder {
    enum Scope { case none, orphan, control, global, master, group, region, curve, ignored }
    var scope = Scope.none
    var global: [SFZSetter] = [] { didSet { inherited = nil } }
    var master: [SFZSetter] = [] { didSet { inherited = nil } }
    var group: [SFZSetter] = [] { didSet { inherited = nil } }
    var region: [SFZSetter] = []
    /// What the regions under the current headers inherit, once resolved (so a file of many
    /// regions under a long <global> costs each setter once, not once per region).
    var inherited: SFZRegionDraft?
    var regionLocation: SFZLocation?
    var defaultPath = ""
    var noteOffset = 0, octaveOffset = 0
    var regions: [SFZRegion] = []
    var warnings: [SFZWarning] = []
    var warned: Set<String> = []
    var problems: [InstrumentProblem] = []
    var controllerDefaults: [Int: Int] = [:]

    mutating func problem(_ at: SFZLocation, _ path: String, _ message: String, fix: String) {
        problems.append(
            InstrumentProblem(file: at.file, line: at.line, column: at.column, path: path, message: message, fix: fix))
    }

    /// Warns once for each `key` (an opcode's name, or a header's `<name>`).
    mutating func warn(_ key: String, _ at: SFZLocation, _ message: String) {
        guard warned.insert(key).inserted else { return }
        warnings.append(SFZWarning(location: at, message: message))
    }

    mutating func take(_ statement: SFZStatement) {
        switch statement.kind {
        case .header(let name):
            endRegion()
            begin(name, at: statement.location)
        case .opcode(let name, let value):
            take(
                SFZOpcode(
                    name: name, value: value, location: statement.location, valueLocation: statement.valueLocation))
        }
    }

    /// A header's resets, as sfizz's onParseFullBlock: <global> clears master and group,
    /// <master> clears group, <group> replaces the group's opcodes, <control> clears default_path.
    mutating func begin(_ name: String, at: SFZLocation) {
        switch name {
        case "control":
            defaultPath = ""
            scope = .control
        case "global":
            (global, master, group) = ([], [], [])
            scope = .global
        case "master":
            (master, group) = ([], [])
            scope = .master
        case "group":
            group = []
            scope = .group
        case "region":
            region = []
            regionLocation = at
            scope = .region
        case "curve":
            warn("<curve>", at, "<curve> is not supported (no opcode bellkeys plays uses a curve), ignored")
            scope = .curve
        case "effect", "sample", "midi":
            warn("<\(name)>", at, "unsupported header <\(name)>, its opcodes ignored")
            scope = .ignored
        default:
            problem(
                at, "", "unknown header <\(name)>",
                fix: "headers are <control>, <global>, <master>, <group>, <region> and <curve>")
            scope = .ignored
        }
    }

    mutating func take(_ op: SFZOpcode) {
        switch scope {
        case .none:
            problem(
                op.location, op.name, "\(op.name)= comes before any header",
                fix:
                    "put it under a header: <control> for default_path, note_offset and octave_offset; <global>, <group> or <region> for the others"
            )
            scope = .orphan
        case .orphan, .ignored:
            break
        case .control:
            controlOpcode(op)
        case .curve:
            curveOpcode(op)
        case .global, .master, .group, .region:
            switch regionOpcode(op) {
            case .set(let setter):
                switch scope {
                case .global: global.append(setter)
                case .master: master.append(setter)
                case .group: group.append(setter)
                default: region.append(setter)
                }
            case .invalid:
                break
            case .unsupported:
                warn(op.name, op.location, "unsupported opcode \(op.name), ignored")
            case .noEffect:
                warn(op.name, op.location, "\(op.name) accepted, no effect")
            case .controlOnly:
                warn(op.name, op.location, "\(op.name) belongs under <control>, ignored here")
            }
        }
    }

    mutating func controlOpcode(_ op: SFZOpcode) {
        switch op.name {
        case "default_path":
            defaultPath = sfzPath(op.value)
        case "note_offset":
            if let n = integer(op, -127...127, unit: "semitones") { noteOffset = n }
        case "octave_offset":
            if let n = integer(op, -10...10, unit: "octaves") { octaveOffset = n }
        default:
            if let n = sfzIndex(op.name, after: "set_cc"), (0...127).contains(n) {
                if let value = integer(op, 0...127, unit: "") { controllerDefaults[n] = value }
            } else if sfzIndex(op.name, after: "label_cc") != nil {
                warn(op.name, op.location, "\(op.name) accepted, no effect")
            } else {
                warn(op.name, op.location, "unsupported opcode \(op.name) under <control>, ignored")
            }
        }
    }

    /// <curve>'s opcodes are checked, then the block is ignored (its header warned).
    mutating func curveOpcode(_ op: SFZOpcode) {
        if op.name == "curve_index" {
            _ = integer(op, 0...255, unit: "")
        } else if let n = sfzIndex(op.name, after: "v"), (0...127).contains(n) {
            _ = number(op, -1...1, unit: "")
        } else {
            warn(op.name, op.location, "unsupported opcode \(op.name) under <curve>, ignored")
        }
    }

    mutating func endRegion() {
        guard let at = regionLocation else { return }
        regionLocation = nil
        if inherited == nil {
            var base = SFZRegionDraft(region: SFZRegion(location: at, sample: "", sampleLocation: at))
            for set in global + master + group { set(&base) }
            inherited = base
        }
        var draft = inherited!
        draft.region.location = at
        for set in region { set(&draft) }
        guard let sample = draft.sample else {
            problem(
                at, "<region>", "the region has no sample",
                fix: "add sample=FILE.wav to the <region> or its <group> (relative to the .sfz file's folder)")
            return
        }
        var r = draft.region
        r.sample = sfzPath(defaultPath) + sfzPath(sample.value)
        r.sampleLocation = sample.location
        r.volume += draft.globalVolume + draft.masterVolume + draft.groupVolume
        r.ampVelcurve = draft.velocityCurve.sorted { $0.key < $1.key }.map { (velocity: $0.key, gain: $0.value) }
        for n in Set(draft.loCC.keys).union(draft.hiCC.keys).sorted() {
            let lo = draft.loCC[n] ?? 0, hi = draft.hiCC[n] ?? 127
            guard lo <= hi else {
                problem(at, "<region>", "locc\(n)=\(lo) is above hicc\(n)=\(hi)", fix: "give locc\(n) <= hicc\(n)")
                return
            }
            r.ccRanges[n] = lo...hi
        }
        for (name, lo, hi) in [
            ("key", r.loKey, r.hiKey), ("vel", r.loVel, r.hiVel), ("xfin_", r.xfinLoVel, r.xfinHiVel),
            ("xfout_", r.xfoutLoVel, r.xfoutHiVel),
        ] where lo > hi {
            let (low, high) = name.hasSuffix("_") ? (name + "lovel", name + "hivel") : ("lo" + name, "hi" + name)
            problem(at, "<region>", "\(low)=\(lo) is above \(high)=\(hi)", fix: "give \(low) <= \(high)")
            return
        }
        if r.loRand > r.hiRand {
            problem(
                at, "<region>", "lorand=\(formatNumber(r.loRand)) is above hirand=\(formatNumber(r.hiRand))",
                fix: "give lorand <= hirand")
            return
        }
        // note_offset and octave_offset move the mapping (sfizz's offsetAllKeys), not the MIDI.
        let shift = octaveOffset * 12 + noteOffset
        if shift != 0 {
            func moved(_ key: Int) -> Int { min(max(key + shift, 0), 127) }
            (r.loKey, r.hiKey) = (moved(r.loKey), moved(r.hiKey))
            r.pitchKeycenter = r.pitchKeycenter.map(moved)
            (r.swLoKey, r.swHiKey) = (r.swLoKey.map(moved), r.swHiKey.map(moved))
            (r.swLast, r.swDefault) = (r.swLast.map(moved), r.swDefault.map(moved))
        }
        regions.append(r)
    }
}

/// A path as sfizz reads it: trimmed of spaces, every `\` turned into `/`.
func sfzPath(_ value: String) -> String {
    var scalars = Array(value.unicodeScalars)[...]
    while let c = scalars.first, c == " " || c == "\t" { scalars = scalars.dropFirst() }
    while let c = scalars.last, c == " " || c == "\t" { scalars = scalars.dropLast() }
    return String(String.UnicodeScalarView(scalars.map { $0 == "\\" ? "/" : $0 }))
}

/// N of an opcode named `prefix` + N (decimal digits); nil if the name is not of that form
/// (Int.max when N is too long for an Int, so that it reads as out of range).
func sfzIndex(_ name: String, after prefix: String) -> Int? {
    guard name.hasPrefix(prefix) else { return nil }
    let digits = name.unicodeScalars.dropFirst(prefix.unicodeScalars.count)
    guard !digits.isEmpty, digits.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
    return Int(String(String.UnicodeScalarView(digits))) ?? Int.max
}
