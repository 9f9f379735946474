import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

/// The room the bells ring in is the player's: it moves when the engine takes a room
/// (`chooseRoom`) or a new engine brings one (`install`), and stays when either is refused.
/// What inputs ask beyond notes reaches the session through `ask`.
@Suite struct PlayerRooms {
    /// One long dry bell with the default reverb mix for a room chosen later (as the loader
    /// gives a dry map), in an engine that holds every room as a live session's does, or not.
    func dryBell(roomsToChoose: Bool) -> Engine {
        makeEngine(
            samples: [constant(0.5, 30_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)],
            reverb: ReverbSettings(preset: .off, mix: ReverbSettings.defaultMix),
            configure: { $0.roomsToChoose = roomsToChoose })
    }

    @Test func aRoomTheEngineHoldsIsTakenAtItsFrameAndIsThePlayersRoom() {
        let rig = Rig(dryBell(roomsToChoose: true), room: .hall)
        #expect(rig.player.room == .hall)
        let church = rig.player.engine.roomSettings.firstIndex { $0.preset == .church }
        #expect(church != nil && rig.player.engine.room(ofSet: 0) != church)
        #expect(rig.player.chooseRoom(.church, arrival: rig.at(100)))
        #expect(rig.player.room == .church)
        // The engine takes it at the frame of the arrival, one period on.
        _ = rig.at(300)
        #expect(rig.player.engine.room(ofSet: 0) == church)
    }

    @Test func anEngineWithoutTheRoomRefusesItAndTheRoomStays() {
        let rig = Rig(dryBell(roomsToChoose: false), room: .off)
        #expect(!rig.player.chooseRoom(.church, arrival: rig.at(100)))
        #expect(rig.player.room == .off)
    }

    @Test func anInstalledEngineBringsItsRoomARefusedOneNothingAndNoRoomKeepsIt() {
        let rig = Rig(longBells(1), room: .off)
        #expect(rig.player.install(longBells(1), masterDecibels: nil, room: .hall, arrival: rig.at(100)))
        #expect(rig.player.room == .hall)
        // The last change is under way: refused, and the room as it was.
        #expect(!rig.player.install(longBells(1), masterDecibels: nil, room: .church, arrival: rig.at(100)))
        #expect(rig.player.room == .hall)
        // Once the old engine is handed back, an engine with no room given keeps the room.
        _ = rig.at(1_000)
        #expect(!rig.player.isReloading)
        #expect(rig.player.install(longBells(1), masterDecibels: nil, arrival: rig.at(1_100)))
        #expect(rig.player.room == .hall)
    }

    @Test func whatIsAskedReachesTheSessionInOrderAndWithoutOneNothingHappens() {
        let rig = Rig(longBells(1))
        rig.player.ask(.reload) // no session yet: dropped
        let session = RecordingSession()
        rig.player.session = session
        rig.player.ask(.room(.hall))
        rig.player.ask(.nextSet(channel: 3, arrival: 7))
        rig.player.ask(.reload)
        #expect(session.requests == [.room(.hall), .nextSet(channel: 3, arrival: 7), .reload])
    }
}
