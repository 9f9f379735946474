import BellkeysClassroom
import BellkeysControl
import BellkeysModel

/// The classroom's phones as a live input: what the web server hands over through the
/// `ClassroomLink` is played through the player like a MIDI keyboard's notes (the piano picture
/// lights them, the loop and --record take them), each device its own source, so a phone that
/// leaves releases what it held; the teacher's room and set are asked of the session through
/// the player. The notes sounding, the master volume, the room and the set go back to the
/// server for the pages. Thread: control.
public final class WebInput: LiveInput {
    public let link: ClassroomLink
    public let classroom: Classroom
    /// The MIDI channel phones play on (--channel, else 1), 0-based.
    public let channel: UInt8
    /// The notes the pages may show, for the lights: every set's (the session's, after a reload).
    public var notes: [Int]
    /// The generation of the classroom's sets: 0 for the map's at start, one more after each
    /// reload (`ClassroomLink.handOver`), published with the set.
    public var setsGeneration = 0
    /// A set asked for that the engine has not reported yet: the loop looks again soon.
    private var setAsked: Int?
    private var setAskedPasses = 0
    public private(set) var strikes = 0
    /// The join address and the room code, for the status line.
    public let joinURL: String
    let code: String
    /// The devices joined now (the server's count).
    let joined: () -> Int

    /// Source numbers of the phones, above any sequencer address (client × 256 + port).
    public static let sourceBase = 1 << 24

    /// Plays what the server hands over through `link` for `classroom`'s bells on `channel`
    /// (lighting `notes`, else the classroom's bells); `joinURL` and `joined` (the server's) are
    /// for the status line.
    public init(
        link: ClassroomLink, classroom: Classroom, channel: UInt8, notes: [Int]? = nil, joinURL: String,
        joined: @escaping () -> Int
    ) {
        self.link = link
        self.classroom = classroom
        self.channel = channel
        self.joined = joined
        self.notes = notes ?? classroom.bells.map(\.note)
        self.joinURL = joinURL
        code = classroom.code.digits
    }

    /// "classroom: ADDRESS code NNNN · N devices", for the status line.
    public var statusText: String {
        let joined = joined()
        return "classroom \(joinURL) code \(code) · \(joined) device\(joined == 1 ? "" : "s")"
    }

    public var descriptors: [FileDescriptor] { [FileDescriptor(link.controlDescriptor)] }
    /// Whether a phone's light may be on: the bells sounded at the last look.
    private var lightsMayBeOn = false
    // The lights follow the bells within 20 ms while any sounds; when all are dark, the phones'
    // requests wake the loop.
    public var pollTimeoutMilliseconds: Int32? { lightsMayBeOn || setAsked != nil ? 20 : nil }

    public func drain(ready: Bool, player: LivePlayer) -> InputOutcome {
        for request in link.takeRequests() {
            switch request {
            case .noteOn(let device, let note, let velocity, let arrival):
                player.play(
                    .noteOn(channel: channel, note: UInt8(note), velocity: UInt8(velocity)),
                    from: Self.sourceBase + device, arrival: arrival)
                link.queued(device: device, note: note, arrival: arrival)
                strikes += 1
            case .noteOff(let device, let note, let arrival):
                player.play(
                    .noteOff(channel: channel, note: UInt8(note), velocity: 64), from: Self.sourceBase + device,
                    arrival: arrival)
            case .gone(let device, let arrival):
                player.release(source: Self.sourceBase + device, arrival: arrival)
            case .dampAll(let arrival):
                player.dampAll(arrival: arrival)
            case .volume(let decibels):
                player.setMasterVolume(decibels: decibels, range: Instrument.volumeRange)
            case .reverb(let index):
                // The server writes an index of the teacher's menu (`TeacherMessage.presets`).
                if TeacherMessage.presets.indices.contains(index),
                    let preset = ReverbPreset(rawValue: TeacherMessage.presets[index])
                {
                    player.ask(.room(preset))
                }
            case .set(let index, let arrival):
                player.ask(.set(index: index, channel: channel, arrival: arrival))
                setAsked = index
                setAskedPasses = 0
            }
        }
        // Rest first: a bell that rings out between the two looks leaves the lights as
        // published, and the loop looks again.
        let atRest = player.isAtRest
        let lit = link.publishSounding({ player.isSounding(note: $0) }, notes: notes)
        lightsMayBeOn = !atRest || lit
        link.masterCentibels.store(Int((player.masterDecibels * 100).rounded()), ordering: .relaxed)
        link.roomIndex.store(TeacherMessage.presets.firstIndex(of: player.room.rawValue) ?? 0, ordering: .relaxed)
        // The engine reports the set once it has played the program change (a block or two);
        // a set it never takes (a reload meanwhile) stops the quick looks after 50 passes.
        let set = player.engineSet(channel: Int(channel))
        link.setIndex.store(setsGeneration << 8 | set, ordering: .releasing)
        setAskedPasses += 1
        if set == setAsked || setAskedPasses > 50 { setAsked = nil }
        return .carryOn
    }
}
