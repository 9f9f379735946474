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
    case velocity(fixed: Int?)
    case follow(tune: Int, tempo: Int)
    case stopFollow

    public static let maximumBytes = 1_024
    public static let presets = ["off", "room", "hall", "church"]
}

/// Reads one teacher message. Thread: any (the server's).
public func readTeacherMessage(_ bytes: [UInt8]) throws(PupilMessageError) -> TeacherMessage {
    guard bytes.count <= TeacherMessage.maximumBytes else {
        throw PupilMessageError(
            field: "message", problem: "\(bytes.count) bytes, more than \(TeacherMessage.maximumBytes)",
            fix: "send one short JSON object")
    }
    let root: JSONNode
    do {
        root = try parseJSON(bytes, maxDepth: 3)
    } catch {
        throw PupilMessageError(
            field: "message", problem: "not JSON (column \(error.column): \(printable(error.message, limit: 80)))",
            fix: "send one JSON object")
    }
    guard case .object(let members) = root.value else {
        throw PupilMessageError(
            field: "message", problem: "\(root.kindName), not an object", fix: "send one JSON object")
    }
    func member(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
    let types = "deal, dealRound, free, remove, volume, dampAll, reverb, velocity, follow or stopFollow"
    guard let typeNode = member("type"), case .string(let type) = typeNode.value else {
        throw PupilMessageError(field: "type", problem: "missing or not a string", fix: "give \"type\": \(types)")
    }
    let allowed: [String]
    switch type {
    case "deal": allowed = ["type", "device", "notes"]
    case "dealRound", "free", "dampAll", "stopFollow": allowed = ["type"]
    case "follow": allowed = ["type", "tune", "tempo"]
    case "remove": allowed = ["type", "device"]
    case "volume": allowed = ["type", "decibels"]
    case "reverb": allowed = ["type", "preset"]
    case "velocity": allowed = ["type", "fixed"]
    default:
        throw PupilMessageError(
            field: "type", problem: "\"\(printable(type))\" is not a message", fix: "give \"type\": \(types)")
    }
    if let extra = members.first(where: { !allowed.contains($0.key) }) {
        throw PupilMessageError(
            field: extra.key.isEmpty ? "\"\"" : printable(extra.key), problem: "not a field of \(type)",
            fix: "send only \(allowed.joined(separator: ", "))")
    }
    func whole(_ node: JSONNode?, _ key: String, _ range: ClosedRange<Int>) throws(PupilMessageError) -> Int {
        guard let node, case .number(let x) = node.value, x.rounded() == x, x >= Double(range.lowerBound),
            x <= Double(range.upperBound)
        else {
            throw PupilMessageError(
                field: key, problem: "missing or not a whole number \(range.lowerBound) to \(range.upperBound)",
                fix: "give \(key) as a whole number \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(x)
    }
    switch type {
    case "deal":
        guard let node = member("notes"), case .array(let items) = node.value, items.count <= 13 else {
            throw PupilMessageError(
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
    case "volume":
        guard let node = member("decibels"), case .number(let x) = node.value, x >= -60, x <= 12 else {
            throw PupilMessageError(
                field: "decibels", problem: "missing or not -60 to 12", fix: "give decibels from -60 to 12")
        }
        return .volume(decibels: x)
    case "reverb":
        guard let node = member("preset"), case .string(let preset) = node.value,
            TeacherMessage.presets.contains(preset)
        else {
            throw PupilMessageError(
                field: "preset", problem: "missing or not a room", fix: "give preset: off, room, hall or church")
        }
        return .reverb(preset: preset)
    default:
        guard let node = member("fixed") else {
            throw PupilMessageError(
                field: "fixed", problem: "missing", fix: "give fixed as a velocity 1 to 127, or null")
        }
        if case .null = node.value { return .velocity(fixed: nil) }
        return .velocity(fixed: try whole(node, "fixed", 1...127))
    }
}
