import BellkeysFormats

// The opening every reader of the network's messages shares (a pupil's, the teacher's): the
// size limit, the JSON parse, one object, a "type" that names a message, and no field that
// message does not name. Each reader then reads its own fields and throws its own error type.

/// Why a message was refused: the field (or "message" for the whole), what was wrong, the fix.
/// `PupilMessageError` and `TeacherMessageError` are these.
public protocol MessageRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    var field: String { get }
    var problem: String { get }
    var fix: String { get }
    init(field: String, problem: String, fix: String)
}

extension MessageRefusal {
    public var description: String { "\(field): \(problem); \(fix)" }
}

/// A message past its opening: its type, and its members (only the fields the type names).
struct OpenedMessage {
    let type: String
    let members: [(key: String, value: JSONNode)]

    func member(_ key: String) -> JSONNode? { members.first { $0.key == key }?.value }
}

/// Opens one message: at most `maximumBytes`, JSON nested at most `maximumDepth` deep, an
/// object whose "type" is one of `fields` and whose members are only those its entry lists
/// ("type" among them). Thread: any (the server's).
func openMessage<Refusal: MessageRefusal>(
    _ bytes: [UInt8], maximumBytes: Int, maximumDepth: Int, fields: [(type: String, allowed: [String])],
    refusal: Refusal.Type
) throws(Refusal) -> OpenedMessage {
    guard bytes.count <= maximumBytes else {
        throw Refusal(
            field: "message", problem: "\(bytes.count) bytes, more than \(maximumBytes)",
            fix: "send one short JSON object")
    }
    let root: JSONNode
    do {
        root = try parseJSON(bytes, maxDepth: maximumDepth)
    } catch {
        throw Refusal(
            field: "message", problem: "not JSON (column \(error.column): \(printable(error.message, limit: 80)))",
            fix: "send one JSON object")
    }
    guard case .object(let members) = root.value else {
        throw Refusal(field: "message", problem: "\(root.kindName), not an object", fix: "send one JSON object")
    }
    let types = fields.map(\.type)
    let giveType = "give \"type\": " + types.dropLast().joined(separator: ", ") + " or " + types.last!
    guard let typeNode = members.first(where: { $0.key == "type" })?.value else {
        throw Refusal(field: "type", problem: "missing", fix: giveType)
    }
    guard case .string(let type) = typeNode.value else {
        throw Refusal(field: "type", problem: "\(typeNode.kindName), not a string", fix: giveType)
    }
    guard let allowed = fields.first(where: { $0.type == type })?.allowed else {
        throw Refusal(field: "type", problem: "\"\(printable(type))\" is not a message", fix: giveType)
    }
    if let extra = members.first(where: { !allowed.contains($0.key) }) {
        throw Refusal(
            field: extra.key.isEmpty ? "\"\"" : printable(extra.key), problem: "not a field of \(type)",
            fix: "send only \(allowed.joined(separator: ", "))")
    }
    return OpenedMessage(type: type, members: members)
}

/// A value as an error may show it: numbers and short strings as they are, others by kind.
func describe(_ node: JSONNode) -> String {
    switch node.value {
    case .number(let x): return x.rounded() == x && abs(x) < 1e15 ? String(Int64(x)) : String(x)
    case .string(let s): return "\"" + printable(s) + "\""
    default: return node.kindName
    }
}

/// At most `limit` characters of `s`, control and formatting characters as `?`, for messages
/// a teacher may read (the JSON reader's own messages quote the bytes they stopped at).
func printable(_ s: String, limit: Int = 32) -> String {
    var out = String.UnicodeScalarView()
    for scalar in s.unicodeScalars.prefix(limit) {
        out.append(
            scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format ? "?" : scalar
        )
    }
    return String(out) + (s.unicodeScalars.count > limit ? "…" : "")
}
