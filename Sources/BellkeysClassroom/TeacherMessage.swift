import BellkeysFormats

/// One message from the teacher's page (only the teacher's computer, or a page opened with the
/// teacher key, may send these; they are read as strictly as a pupil's all the same):
///
///     {"type": "deal", "device": 3, "notes": [60, 62]}   give device 3 these bells
///     {"type": "dealRound"}                               every bell round the room
///     {"type": "free"}                                    everyone holds every bell
///     {"type": "remove", "device": 3}                     close device 3
///     {"type": "volume", "decibels": -6}                  master volume, -60 to 12 dB
///     {"type": "dampAll"}                                 damp every damped bell
///     {"type": "reverb", "preset": "hall"}                off, room, hall or church
///     {"type": "set", "index": 1}                         the phones play the map's second set
///     {"type": "velocity", "fixed": 100}                  every strike at 100 (null: as struck)
///     {"type": "follow", "tune": 0, "tempo": 100}         start tune 0 as a follow-along at 100 %
///     {"type": "stopFollow"}                              stop it
public enum TeacherMessage: Equatable, Sendable {
    case deal(device: Int, notes: [Int])
    case dealRound
    case free
    case remove(device: Int)
    case volume(decibels: Double)
    case dampAll
    case reverb(preset: String)
    case set(index: Int)
    case velocity(fixed: Int?)
    case follow(tune: Int, tempo: Int)
    case stopFollow

    public static let maximumBytes = 1_024
    public static let presets = ["off", "room", "hall", "church"]
}

/// Why a teacher's message was refused: the field (or "message" for the whole), what was
/// wrong, the fix. The page shows it (a bug to see: the teacher's page is ours).
public struct TeacherMessageError: MessageRefusal {
    public var field: String
    public var problem: String
    public var fix: String

    public init(field: String, problem: String, fix: String) {
        self.field = field
        self.problem = problem
        self.fix = fix
    }
}

/// Reads one teacher message. Thread: any (the server's).
public func readTeacherMessage(_ bytes: [UInt8]) throws(TeacherMessageError) -> TeacherMessage {
    let opened = try openMessage(
        bytes, maximumBytes: TeacherMessage.maximumBytes, maximumDepth: 3,
        fields: [
            ("deal", ["type", "device", "notes"]), ("dealRound", ["type"]), ("free", ["type"]),
            ("remove", ["type", "device"]), ("volume", ["type", "decibels"]), ("dampAll", ["type"]),
            ("reverb", ["type", "preset"]), ("set", ["type", "index"]), ("velocity", ["type", "fixed"]),
            ("follow", ["type", "tune", "tempo"]),
            ("stopFollow", ["type"]),
        ], refusal: TeacherMessageError.self)
    let member = opened.member
    func whole(_ node: JSONNode?, _ key: String, _ range: ClosedRange<Int>) throws(TeacherMessageError) -> Int {
        guard let node, case .number(let x) = node.value, x.rounded() == x, x >= Double(range.lowerBound),
            x <= Double(range.upperBound)
        else {
            throw TeacherMessageError(
                field: key, problem: "missing or not a whole number \(range.lowerBound) to \(range.upperBound)",
                fix: "give \(key) as a whole number \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(x)
    }
    switch opened.type {
    case "deal":
        guard let node = member("notes"), case .array(let items) = node.value, items.count <= 13 else {
            throw TeacherMessageError(
                field: "notes", problem: "missing, not an array, or over 13 notes", fix: "give notes as [60, 62]")
        }
        var notes: [Int] = []
        for item in items { notes.append(try whole(item, "notes", 0...127)) }
        return .deal(device: try whole(member("device"), "device", 1...Int(Int32.max)), notes: notes)
    case "dealRound": return .dealRound
    case "free": return .free
    case "dampAll": return .dampAll
    case "stopFollow": return .stopFollow
    case "follow":
        return .follow(
            tune: try whole(member("tune"), "tune", 0...99), tempo: try whole(member("tempo"), "tempo", 50...200))
    case "remove": return .remove(device: try whole(member("device"), "device", 1...Int(Int32.max)))
    case "set": return .set(index: try whole(member("index"), "index", 0...(MapFile.maximumSets - 1)))
    case "volume":
        guard let node = member("decibels"), case .number(let x) = node.value, x >= -60, x <= 12 else {
            throw TeacherMessageError(
                field: "decibels", problem: "missing or not -60 to 12", fix: "give decibels from -60 to 12")
        }
        return .volume(decibels: x)
    case "reverb":
        guard let node = member("preset"), case .string(let preset) = node.value,
            TeacherMessage.presets.contains(preset)
        else {
            throw TeacherMessageError(
                field: "preset", problem: "missing or not a room", fix: "give preset: off, room, hall or church")
        }
        return .reverb(preset: preset)
    default:
        guard let node = member("fixed") else {
            throw TeacherMessageError(
                field: "fixed", problem: "missing", fix: "give fixed as a velocity 1 to 127, or null")
        }
        if case .null = node.value { return .velocity(fixed: nil) }
        return .velocity(fixed: try whole(node, "fixed", 1...127))
    }
}
