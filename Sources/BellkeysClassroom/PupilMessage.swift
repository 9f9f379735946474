import BellkeysFormats

// Issue 16 (phones as handbells), first part: what a pupil's browser may say, read strictly.
// Everything here is hostile input from the network: the reader takes at most
// `PupilMessage.maximumBytes`, accepts only the fields each message names, with the types and
// ranges given, and answers anything else with an error that names the field and the fix (the
// server closes that connection and counts it). Pure Swift, no I/O: the server library and the
// page come next.

/// One message from a pupil's page, a JSON object with a "type":
///
///     {"type": "join", "code": "4821", "name": "Ada"}     code: the room code, 4 digits;
///                                                         name: 1 to 24 characters, no controls;
///                                                         optional "resume": the token of the
///                                                         welcome, to come back as the same
///                                                         device (with its bells)
///     {"type": "strike", "note": 60, "velocity": 100}    note 0...127, velocity 1...127;
///                                                         optional "at": when the finger
///                                                         landed, on bellkeys' clock (ms, as
///                                                         the page's clock offset gives it),
///                                                         for the follow-along's judgement
///     {"type": "release", "note": 60}                    the finger left the bell
///     {"type": "damp", "note": 60}                       the damp gesture
///     {"type": "ping", "sent": 1234.5}                   the page's clock (ms, finite, >= 0),
///                                                         for the clock offset (as NTP)
public enum PupilMessage: Equatable, Sendable {
    case join(code: String, name: String, resume: String? = nil)
    case strike(note: Int, velocity: Int, at: Double? = nil)
    case release(note: Int)
    case damp(note: Int)
    case ping(sent: Double)

    /// The longest message read; a longer one is refused unread (a join with a 24-character
    /// name of 4-byte characters is 150 bytes).
    public static let maximumBytes = 256
    /// The longest name, in characters.
    public static let maximumNameLength = 24
}

/// Why a message was refused: the field (or "message" for the whole), what was wrong, the fix.
public struct PupilMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var problem: String
    public var fix: String

    public var description: String { "\(field): \(problem); \(fix)" }
}

/// Reads one message. Thread: any (the server's).
public func readPupilMessage(_ bytes: [UInt8]) throws(PupilMessageError) -> PupilMessage {
    guard bytes.count <= PupilMessage.maximumBytes else {
        throw PupilMessageError(
            field: "message", problem: "\(bytes.count) bytes, more than \(PupilMessage.maximumBytes)",
            fix: "send one short JSON object")
    }
    let root: JSONNode
    do {
        root = try parseJSON(bytes, maxDepth: 2)
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
    guard let typeNode = member("type") else {
        throw PupilMessageError(
            field: "type", problem: "missing", fix: "give \"type\": join, strike, release, damp or ping")
    }
    guard case .string(let type) = typeNode.value else {
        throw PupilMessageError(
            field: "type", problem: "\(typeNode.kindName), not a string",
            fix: "give \"type\": join, strike, release, damp or ping")
    }
    let allowed: [String]
    switch type {
    case "join": allowed = ["type", "code", "name", "resume"]
    case "strike": allowed = ["type", "note", "velocity", "at"]
    case "release", "damp": allowed = ["type", "note"]
    case "ping": allowed = ["type", "sent"]
    default:
        throw PupilMessageError(
            field: "type", problem: "\"\(printable(type))\" is not a message",
            fix: "give \"type\": join, strike, release, damp or ping")
    }
    if let extra = members.first(where: { !allowed.contains($0.key) }) {
        throw PupilMessageError(
            field: extra.key.isEmpty ? "\"\"" : printable(extra.key), problem: "not a field of \(type)",
            fix: "send only \(allowed.joined(separator: ", "))")
    }

    func integer(_ key: String, _ range: ClosedRange<Int>) throws(PupilMessageError) -> Int {
        guard let node = member(key) else {
            throw PupilMessageError(
                field: key, problem: "missing",
                fix: "give \(key) as a whole number \(range.lowerBound) to \(range.upperBound)")
        }
        guard case .number(let x) = node.value, x.rounded() == x, x >= Double(range.lowerBound),
            x <= Double(range.upperBound)
        else {
            throw PupilMessageError(
                field: key,
                problem: "\(describe(node)) is not a whole number \(range.lowerBound) to \(range.upperBound)",
                fix: "give \(key) as a whole number \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(x)
    }
    func string(_ key: String) throws(PupilMessageError) -> String {
        guard let node = member(key) else {
            throw PupilMessageError(field: key, problem: "missing", fix: "give \(key) as a string")
        }
        guard case .string(let s) = node.value else {
            throw PupilMessageError(
                field: key, problem: "\(node.kindName), not a string", fix: "give \(key) as a string")
        }
        return s
    }

    switch type {
    case "join":
        let code = try string("code")
        guard code.utf8.count == 4, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw PupilMessageError(
                field: "code", problem: "\"\(printable(code))\" is not 4 digits",
                fix: "type the 4 digits the teacher's screen shows")
        }
        let name = try string("name")
        let count = name.unicodeScalars.count
        guard count >= 1, count <= PupilMessage.maximumNameLength else {
            throw PupilMessageError(
                field: "name", problem: "\(count) characters",
                fix: "give a name of 1 to \(PupilMessage.maximumNameLength) characters")
        }
        // Formatting characters are refused (bidirectional overrides could dress one name as
        // another), but for the joiners that emoji sequences and many scripts' names need.
        guard
            !name.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control
                    || ($0.properties.generalCategory == .format && $0 != "\u{200C}" && $0 != "\u{200D}")
                    || $0.properties.generalCategory == .lineSeparator
                    || $0.properties.generalCategory == .paragraphSeparator
            })
        else {
            throw PupilMessageError(
                field: "name", problem: "has control or formatting characters",
                fix: "use letters, digits, spaces and punctuation")
        }
        guard let node = member("resume") else { return .join(code: code, name: name) }
        guard case .string(let token) = node.value, (8...32).contains(token.utf8.count),
            token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw PupilMessageError(
                field: "resume", problem: "not a token",
                fix: "give resume as the token the welcome carried, or leave it out")
        }
        return .join(code: code, name: name, resume: token)
    case "strike":
        let note = try integer("note", 0...127), velocity = try integer("velocity", 1...127)
        guard let node = member("at") else { return .strike(note: note, velocity: velocity) }
        guard case .number(let at) = node.value, at.isFinite, at >= 0 else {
            throw PupilMessageError(
                field: "at", problem: "\(describe(node)) is not a time",
                fix: "give at in ms on bellkeys' clock, 0 or more, or leave it out")
        }
        return .strike(note: note, velocity: velocity, at: at)
    case "release":
        return .release(note: try integer("note", 0...127))
    case "damp":
        return .damp(note: try integer("note", 0...127))
    default:
        guard let node = member("sent") else {
            throw PupilMessageError(field: "sent", problem: "missing", fix: "give sent as the page's clock in ms")
        }
        guard case .number(let x) = node.value, x.isFinite, x >= 0 else {
            throw PupilMessageError(
                field: "sent", problem: "\(describe(node)) is not a time",
                fix: "give sent as the page's clock in ms, 0 or more")
        }
        return .ping(sent: x)
    }
}

/// A value as an error may show it: numbers and short strings as they are, others by kind.
private func describe(_ node: JSONNode) -> String {
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
