import BellkeysControl
import BellkeysEngine
import BellkeysModel
import BellkeysSystem
import Glibc

// The room and the set the keyboard plays, chosen live (`r`, `p`, the teacher's page), in the
// engine playing, and a reload (SIGHUP): what the inputs ask of the session through the
// player. Thread: control.
extension LiveSession {
    func carryOut(_ request: SessionRequest) {
        switch request {
        case .nextRoom: changeRoom()
        case .room(let preset): setRoom(preset)
        case .nextSet(let channel, let arrival): nextSet(channel: channel, arrival: arrival)
        case .set(let index, let channel, let arrival):
            chooseSet(index, channel: channel, arrival: arrival, by: ", the teacher's choice")
        case .reload: reload()
        }
    }

    /// The room the bells ring in now (the player's): the map's or --reverb's, then as `r` and
    /// the teacher change it.
    var room: ReverbPreset { player.room }

    /// `r`: the next room (off, room, hall, church) after the one shown, for every set. The bells
    /// already sounding ring out in the room they were struck in; the next strikes ring in the
    /// new one (`takeWantedRoom`).
    func changeRoom() {
        let rooms = ReverbPreset.allCases
        setRoom(rooms[(rooms.firstIndex(of: shownRoom)! + 1) % rooms.count])
    }

    /// `p`: the next set of a map of several, on the terminal's `channel`, from `arrival` (the
    /// bells ringing ring on in their set); with one instrument, says there is nothing to change.
    func nextSet(channel: UInt8, arrival: MonotonicInstant) {
        guard !loaded.sets.isEmpty else {
            console.line("set: \(loaded.path) is one instrument; a map with \"sets\" has several (docs/map.md)")
            return
        }
        guard let next = loaded.nextSet(after: player.engineSet(channel: Int(channel)), channel: Int(channel)) else {
            console.line("set: no other preset plays on channel \(channel + 1)")
            return
        }
        chooseSet(next, channel: channel, arrival: arrival, by: "")
    }

    /// Plays set `index` of the map's on `channel` from `arrival`, as a program change with its
    /// bank select (so a loop being recorded keeps it), and says so; `by` names who chose it.
    func chooseSet(_ index: Int, channel: UInt8, arrival: MonotonicInstant, by: String) {
        guard loaded.sets.indices.contains(index) else { return }
        let set = loaded.sets[index]
        player.chooseSet(
            program: set.program, bank: loaded.bankChoosing(set: index), channel: channel, arrival: arrival)
        console.line("set: \(set.name) (\(index + 1) of \(loaded.sets.count))\(by): \(set.instrument.contentsText)")
    }

    /// The room the status line shows and `r` moves on from: the room asked for, or, while the
    /// sets of a map ring in rooms of their own, the room of the set the keyboard plays.
    var shownRoom: ReverbPreset {
        guard setsRoomsDiffer, wantedRoom == room else { return wantedRoom }
        let set = player.engine.currentSet(channel: Int(keys?.channel ?? 0))
        return loaded.sets[min(set, loaded.sets.count - 1)].instrument.reverb.preset
    }

    /// Puts the bells in `preset` (the teacher's page), as `r` does.
    func setRoom(_ preset: ReverbPreset) {
        wantedRoom = preset
        roomOverride = preset
        roomAsked = setsRoomsDiffer
        takeWantedRoom()
    }

    /// Puts the bells in the room `r` asked for, if it is not the one and no change is under way:
    /// in the engine playing (each set's next strikes in the new room), or, if it holds no
    /// such room, a new engine.
    func takeWantedRoom() {
        guard wantedRoom != room || roomAsked else { return }
        if player.chooseRoom(wantedRoom, arrival: monotonicInstant()) {
            setsRoomsDiffer = false
            roomAsked = false
            console.line("room: \(room.rawValue)" + (room == .off ? " (no reverb)" : ""))
            return
        }
        guard !player.isReloading else { return }
        let newEngine = settings.voices.makeEngine(
            loaded, notes: settings.notes, room: wantedRoom, roomsToChoose: true)
        guard install(newEngine, masterDecibels: player.masterDecibels, room: wantedRoom) else { return }
        setsRoomsDiffer = false
        roomAsked = false
        console.line("room: \(room.rawValue)" + (room == .off ? " (no reverb)" : ""))
    }
}
