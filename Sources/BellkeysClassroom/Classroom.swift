// The classroom: who has joined, which bells each holds, and what each pupil's message does.
// Plain state with the time passed in (monotonic nanoseconds), no I/O: the server (BellkeysClassroomServer's
// WebServer) owns one, feeds it what arrives and carries out what it returns: notes for the
// engine (through the control thread's player, the same path as a MIDI keyboard's), and JSON
// for a device or for everyone. Thread: the server's.

/// One of the map's bells as the pages show it.
public struct ClassroomBell: Equatable, Sendable {
    public var note: Int
    /// "C4", "F#4".
    public var name: String
    /// Whether letting go damps it (the map's `damp` keys); a ringing bell ignores the damp.
    public var damps: Bool
    public init(note: Int, name: String, damps: Bool) {
        self.note = note
        self.name = name
        self.damps = damps
    }

    /// The classroom colour of the bell's pitch class (the chromatic colours of school
    /// percussion tubes: C red, D orange, E yellow, F green, G teal, A purple, B pink).
    public var colour: String {
        [
            "#e21c48", "#f26622", "#f99d1c", "#ffcc33", "#fff32b", "#bcd85f", "#62bc47", "#009c95", "#0071bb",
            "#5e50a1",
            "#8d5ba6", "#cf3e96",
        ][((note % 12) + 12) % 12]
    }
}

/// What the classroom asks the server to do with a note.
public enum ClassroomNote: Equatable, Sendable {
    case on(note: Int, velocity: Int)
    case off(note: Int)
}

public struct ClassroomLimits: Equatable, Sendable {
    /// Joined devices at most (the teacher's page shows it).
    public var maximumDevices = 64
    /// Devices joined from one address at once (this machine's own excepted).
    public var devicesPerAddress = 4
    /// Strikes per second per device, and the burst allowed above that.
    public var strikesPerSecond = 10.0
    public var strikeBurst = 20.0
    public init() {}
}

public final class Classroom {
    public let code: JoinCode
    /// The bells of the set the phones play (`changeSet`).
    public private(set) var bells: [ClassroomBell]
    /// The set's name, for the pages (nil: a map of one instrument).
    public private(set) var setName: String?
    public let limits: ClassroomLimits

    /// Free play (everyone holds all the bells) or dealt (each holds what the teacher gave).
    public enum Mode: String, Sendable { case free, dealt }
    public private(set) var mode = Mode.free
    /// With a fixed velocity every strike sounds at it; else at the velocity the page sends
    /// (from where on the bell the finger lands).
    public var fixedVelocity: Int?

    public struct Device: Sendable {
        public let id: Int
        public fileprivate(set) var connection: Int
        /// The token a page comes back with after its connection dropped (random, 16 hex).
        public let token: String
        public let name: String
        public let address: String
        /// The notes this device holds (dealt), in order.
        public fileprivate(set) var dealt: [Int] = []
        public fileprivate(set) var strikes = 0
        /// Strikes refused by the rate limit.
        public var rateLimited: Int { limiter.refused + releaseLimiter.refused }
        fileprivate var limiter: StrikeLimiter
        fileprivate var releaseLimiter: StrikeLimiter
        public let joined: UInt64
    }
    /// Devices in the order they joined.
    public private(set) var devices: [Device] = []
    private var nextID = 1
    private var joinGuard = JoinGuard()

    /// Counted for the teacher.
    public struct Counters: Equatable, Sendable {
        /// Connections closed for a malformed message or frame.
        public var malformed = 0
        /// Wrong room codes, and joins refused while guessing was locked.
        public var wrongCodes = 0
        public var lockedOut = 0
        /// Joins refused because `maximumDevices` had joined.
        public var full = 0
        /// Strikes (and releases) refused by the rate limit, in all.
        public var rateLimited = 0
        /// Strikes of a bell the device does not hold (a page behind a new deal).
        public var notHeld = 0
        /// Devices removed by the teacher.
        public var removed = 0
    }
    public var counters = Counters()

    public init(
        bells: [ClassroomBell], setName: String? = nil, code: JoinCode = JoinCode(),
        limits: ClassroomLimits = ClassroomLimits()
    ) {
        self.bells = bells
        self.setName = setName
        self.code = code
        self.limits = limits
    }

    /// The phones now play the set `name` of `bells` (the teacher chose it, or a program
    /// change on their channel did). Each device keeps the bells dealt to it that the set also
    /// has, in free play every bell of the set; a bell the set lacks is taken back (the teacher
    /// deals again). Returns whether the notes changed (not only their names or damping).
    @discardableResult
    public func changeSet(name: String?, bells newBells: [ClassroomBell]) -> Bool {
        let changed = newBells.map(\.note) != bells.map(\.note)
        bells = newBells
        setName = name
        let notes = Set(newBells.map(\.note))
        for k in devices.indices { devices[k].dealt.removeAll { !notes.contains($0) } }
        return changed
    }

    public func device(connection: Int) -> Device? { devices.first { $0.connection == connection } }
    public func device(id: Int) -> Device? { devices.first { $0.id == id } }

    /// The notes `device` may ring now.
    public func held(by device: Device) -> [Int] { mode == .free ? bells.map(\.note) : device.dealt }

    // MARK: Pupils

    public enum JoinOutcome: Equatable, Sendable {
        /// Joined as device `id`: send `welcome`. `replaced`: the connection the device had
        /// before it came back (close it; the device stays).
        case joined(id: Int, welcome: String, replaced: Int? = nil)
        /// Refused: send `reply` (JSON) and close the connection.
        case refused(reply: String)
    }

    /// A join from `connection` at `address` (`trusted`: this machine itself, which no
    /// per-address limit counts). With `resume`, the token of an earlier welcome, the device
    /// comes back with its name and bells (a phone whose Wi-Fi dropped); a token this classroom never
    /// gave (bellkeys restarted since) is refused without a look at the code, so it is no guess.
    public func join(
        connection: Int, address: String, code guess: String, name: String, resume: String? = nil,
        trusted: Bool = false, at now: UInt64
    ) -> JoinOutcome {
        if let resume {
            guard let index = devices.firstIndex(where: { $0.token == resume }) else {
                return .refused(
                    reply: refusal("changed", "The room has changed since this page joined. Type the new room code."))
            }
            guard code.matches(guess) else {
                return .refused(
                    reply: refusal("changed", "The room has changed since this page joined. Type the new room code."))
            }
            let replaced = devices[index].connection
            devices[index].connection = connection
            return .joined(
                id: devices[index].id, welcome: welcomeJSON(devices[index]),
                replaced: replaced == connection ? nil : replaced)
        }
        switch joinGuard.mayTry(from: address, at: now) {
        case .allowed: break
        case .refused(let seconds):
            counters.lockedOut += 1
            return .refused(
                reply: refusal("locked", "Too many wrong codes. Wait \(seconds) s and ask your teacher for the code."))
        }
        guard code.matches(guess) else {
            joinGuard.wrongCode(from: address, at: now)
            counters.wrongCodes += 1
            return .refused(
                reply: refusal("code", "That is not the room code. Look at the teacher's screen and try again."))
        }
        guard device(connection: connection) == nil else {
            return .refused(reply: refusal("joined", "This page has joined already."))
        }
        guard devices.count < limits.maximumDevices else {
            counters.full += 1
            return .refused(
                reply: refusal("full", "The room is full (\(limits.maximumDevices) devices). Ask your teacher."))
        }
        guard trusted || devices.count(where: { $0.address == address }) < limits.devicesPerAddress else {
            counters.full += 1
            return .refused(
                reply: refusal(
                    "full", "\(limits.devicesPerAddress) devices have joined from this one already. Ask your teacher."))
        }
        // Two pupils called Sam are Sam and Sam 2.
        var unique = name, n = 2
        while devices.contains(where: { $0.name == unique }) {
            unique = "\(name) \(n)"
            n += 1
        }
        let device = Device(
            id: nextID, connection: connection, token: Self.newToken(), name: unique, address: address,
            limiter: StrikeLimiter(perSecond: limits.strikesPerSecond, burst: limits.strikeBurst),
            releaseLimiter: StrikeLimiter(perSecond: limits.strikesPerSecond, burst: limits.strikeBurst), joined: now)
        nextID += 1
        devices.append(device)
        return .joined(id: device.id, welcome: welcomeJSON(device))
    }

    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(Int.random(in: 0..<16, using: &generator), radix: 16) }.joined()
    }

    private func refusal(_ why: String, _ text: String) -> String {
        "{\"type\":\"refused\",\"why\":\(jsonQuoted(why)),\"text\":\(jsonQuoted(text))}"
    }

    /// What a joined device's message does: a note for the engine, or nothing (a bell it does
    /// not hold, the rate limit). Pings are answered by the server (they need its clock).
    public func perform(_ message: PupilMessage, connection: Int, at now: UInt64) -> ClassroomNote? {
        guard let index = devices.firstIndex(where: { $0.connection == connection }) else { return nil }
        let device = devices[index]
        switch message {
        case .strike(let note, let velocity, _):
            guard held(by: device).contains(note) else {
                counters.notHeld += 1
                return nil
            }
            guard devices[index].limiter.allow(at: now) else {
                counters.rateLimited += 1
                return nil
            }
            devices[index].strikes += 1
            return .on(note: note, velocity: fixedVelocity ?? velocity)
        case .release(let note), .damp(let note):
            guard held(by: device).contains(note) else { return nil }
            guard devices[index].releaseLimiter.allow(at: now) else {
                counters.rateLimited += 1
                return nil
            }
            return .off(note: note)
        case .join, .ping:
            return nil
        }
    }

    /// `connection` closed (or was closed): its device leaves. Returns the device's id if it had
    /// joined (its held notes are then released, as an unplugged keyboard's).
    @discardableResult
    public func leave(connection: Int) -> Int? {
        guard let index = devices.firstIndex(where: { $0.connection == connection }) else { return nil }
        return devices.remove(at: index).id
    }

    // MARK: The teacher

    /// Gives device `id` exactly `notes` (of the map's bells; one or two, or more), and turns
    /// free play off. Returns false if there is no such device or a note is not a bell.
    @discardableResult
    public func deal(_ notes: [Int], to id: Int) -> Bool {
        guard let index = devices.firstIndex(where: { $0.id == id }),
            notes.allSatisfy({ note in bells.contains { $0.note == note } })
        else { return false }
        if mode == .free {
            mode = .dealt
            for k in devices.indices { devices[k].dealt = [] }
        }
        var unique: [Int] = []
        for note in notes where !unique.contains(note) { unique.append(note) }
        devices[index].dealt = unique
        return true
    }

    /// Deals every bell round the room in pitch order, one each in turn: with fewer devices
    /// than bells some hold two or more (every bell is given); with more devices than bells the
    /// bells go round again, and pupils share one.
    public func dealRound() {
        mode = .dealt
        for k in devices.indices { devices[k].dealt = [] }
        let notes = bells.map(\.note).sorted()
        guard !devices.isEmpty, !notes.isEmpty else { return }
        if devices.count >= notes.count {
            for k in devices.indices { devices[k].dealt = [notes[k % notes.count]] }
        } else {
            for (i, note) in notes.enumerated() { devices[i % devices.count].dealt.append(note) }
        }
    }

    /// Everyone holds every bell.
    public func freePlay() {
        mode = .free
        for k in devices.indices { devices[k].dealt = [] }
    }

    /// The teacher removes device `id`; returns its connection (to close), or nil.
    public func remove(id: Int) -> Int? {
        guard let index = devices.firstIndex(where: { $0.id == id }) else { return nil }
        counters.removed += 1
        return devices.remove(at: index).connection
    }

    // MARK: What the pages are told

    /// The first message to a device that joined: its name and its bells.
    public func welcomeJSON(_ device: Device) -> String {
        "{\"type\":\"welcome\",\"id\":\(device.id),\"name\":\(jsonQuoted(device.name)),\"resume\":\"\(device.token)\",\"bells\":\(bellsArrayJSON(device))"
            + ",\"fixedVelocity\":\(fixedVelocity.map(String.init) ?? "null"),\"set\":\(setNameJSON)}"
    }

    /// A device's bells after a deal.
    public func bellsJSON(_ device: Device) -> String {
        "{\"type\":\"bells\",\"bells\":\(bellsArrayJSON(device)),\"fixedVelocity\":\(fixedVelocity.map(String.init) ?? "null"),\"set\":\(setNameJSON)}"
    }

    private var setNameJSON: String { setName.map(jsonQuoted) ?? "null" }

    private func bellsArrayJSON(_ device: Device) -> String {
        let held = held(by: device)
        let shown = bells.filter { held.contains($0.note) }.sorted {
            held.firstIndex(of: $0.note)! < held.firstIndex(of: $1.note)!
        }
        return "["
            + shown.map { bell in
                "{\"note\":\(bell.note),\"name\":\(jsonQuoted(bell.name)),\"colour\":\"\(bell.colour)\",\"damps\":\(bell.damps)}"
            }.joined(separator: ",") + "]"
    }

    /// Which bells sound now (anyone's strike): every page lights them.
    public static func litJSON(_ notes: [Int]) -> String {
        "{\"type\":\"lit\",\"notes\":[" + notes.map(String.init).joined(separator: ",") + "]}"
    }

    /// The teacher's view: the classroom, its limits and counters, and every device.
    public func teacherJSON(extra: [(String, String)] = [], device deviceExtra: (Int) -> String? = { _ in nil })
        -> String
    {
        var s = "{\"type\":\"room\",\"code\":\(jsonQuoted(code.digits)),\"mode\":\"\(mode.rawValue)\""
        s += ",\"fixedVelocity\":\(fixedVelocity.map(String.init) ?? "null")"
        s +=
            ",\"maximumDevices\":\(limits.maximumDevices),\"strikesPerSecond\":\(limits.strikesPerSecond),\"strikeBurst\":\(limits.strikeBurst)"
        s +=
            ",\"bells\":["
            + bells.map {
                "{\"note\":\($0.note),\"name\":\(jsonQuoted($0.name)),\"colour\":\"\($0.colour)\",\"damps\":\($0.damps)}"
            }
            .joined(separator: ",") + "]"
        let c = counters
        s +=
            ",\"counters\":{\"malformed\":\(c.malformed),\"wrongCodes\":\(c.wrongCodes),\"lockedOut\":\(c.lockedOut),\"full\":\(c.full)"
            + ",\"rateLimited\":\(c.rateLimited),\"notHeld\":\(c.notHeld),\"removed\":\(c.removed)}"
        s +=
            ",\"devices\":["
            + devices.map { d -> String in
                "{\"id\":\(d.id),\"name\":\(jsonQuoted(d.name)),\"address\":\(jsonQuoted(d.address)),\"bells\":[\(held(by: d).map(String.init).joined(separator: ","))]"
                    + ",\"strikes\":\(d.strikes),\"rateLimited\":\(d.rateLimited)"
                    + (deviceExtra(d.id).map { ",\"follow\":" + $0 } ?? "") + "}"
            }.joined(separator: ",") + "]"
        for (key, value) in extra { s += ",\(jsonQuoted(key)):\(value)" }
        return s + "}"
    }
}

/// `s` as a JSON string, quoted and escaped.
public func jsonQuoted(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        // Controls, and the line separators that end a line in older JavaScript.
        case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        // "</" must not close a script when a string is ever put in a page.
        case "<": out += "\\u003c"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
