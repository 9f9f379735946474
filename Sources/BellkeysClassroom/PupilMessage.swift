import BellkeysFormats

// What a pupil's browser may say, read strictly. Everything here is hostile input from the
// network: the reader takes at most `PupilMessage.maximumBytes`, accepts only the fields each
// message names (the opening it shares with the teacher's reader, `openMessage`), with the types
// and ranges given, and answers anything else with an error that names the field and the fix
// (the server closes that connection and counts it). Pure Swift, no I/O.

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

/// Why a pupil's message was refused: the field (or "message" for the whole), what was wrong,
/// the fix.
public struct PupilMessageError: MessageRefusal {
    public var field: String
    public var problem: String
    public var fix: String

    public init(field: String, problem: String, fix: String) {
        self.field = field
        self.problem = problem
        self.fix = fix
    }
}

/// Reads one message. Thread: any (the server's).
public func readPupilMessage(_ bytes: [UInt8]) throws(PupilMessageError) -> PupilMessage {
    let opened = try openMessage(
        bytes, maximumBytes: PupilMessage.maximumBytes, maximumDepth: 2,
        fields: [
            ("join", ["type", "code", "name", "resume"]), ("strike", ["type", "note", "velocity", "at"]),
            ("release", ["type", "note"]), ("damp", ["type", "note"]), ("ping", ["type", "sent"]),
        ], refusal: PupilMessageError.self)
    let member = opened.member

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

    switch opened.type {
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
