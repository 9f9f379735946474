import BellkeysModel

/// What an input asks that the player cannot do by itself, because it needs the instrument as
/// loaded or a new engine: a room, a set of a map of several, the map loaded again. Every
/// input asks the same way (`LivePlayer.ask`), and the session carries it out.
public enum SessionRequest: Equatable, Sendable {
    /// `r`: the next room (off, room, hall, church) after the one shown, for every set.
    case nextRoom
    /// The teacher's page: every set in this room.
    case room(ReverbPreset)
    /// `p`: the next set of a map of several on `channel`, from `arrival`.
    case nextSet(channel: UInt8, arrival: MonotonicInstant)
    /// The teacher's page: set `index` of the map's on `channel`, from `arrival`.
    case set(index: Int, channel: UInt8, arrival: MonotonicInstant)
    /// SIGHUP: the map loaded again.
    case reload
}

/// Who carries out the inputs' requests: the live session, which has the instrument as loaded,
/// builds engines and says what changed. Thread: control.
public protocol SessionRequestHandler: AnyObject {
    func carryOut(_ request: SessionRequest)
}

// Rooms and sets, as the session chooses them; the inputs' requests. Thread: control.
extension LivePlayer {
    /// Hands `request` to the session at once, so that it takes effect before anything asked
    /// after it (a set chosen before a note sounds the note in the new set). A player with no
    /// session (tests of notes alone) does nothing with it.
    public func ask(_ request: SessionRequest) {
        session?.carryOut(request)
    }

    /// Puts every set of the engine in the room `preset` from the frame for `arrival`: the
    /// bells already ringing ring out in their room, the next strikes ring in the new one. No
    /// engine changes hands. False when the engine holds no such room for a set (it was not
    /// made with `roomsToChoose`), and nothing changes.
    public func chooseRoom(_ preset: ReverbPreset, arrival: MonotonicInstant) -> Bool {
        let at = frame(arrival: arrival)
        guard let events = engine.roomEvents(preset: preset, frame: at) else { return false }
        queued(at)
        for event in events { engine.enqueue(event) }
        room = preset
        return true
    }

    /// Chooses set `set` (its program, and bank if it has one) on `channel` from the frame for
    /// `arrival`, as a keyboard's program change would (kept in a loop being recorded).
    public func chooseSet(program: Int, bank: Int?, channel: UInt8, arrival: MonotonicInstant) {
        if let bank {
            play(
                .controlChange(channel: channel, controller: 0, value: UInt8(bank >> 7 & 127)), from: nil,
                arrival: arrival)
            play(
                .controlChange(channel: channel, controller: 32, value: UInt8(bank & 127)), from: nil, arrival: arrival)
        }
        play(.programChange(channel: channel, program: UInt8(program & 127)), from: nil, arrival: arrival)
    }

    /// The set `channel` plays as the engine playing reports it: a program change counts once
    /// the render thread has played it (a block or two after it was queued).
    public func engineSet(channel: Int) -> Int {
        engine.currentSet(channel: channel)
    }
}
