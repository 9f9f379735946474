import BellkeysClassroom
import BellkeysClassroomServer
import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

/// The classroom's phones as a live input, through a real `ClassroomLink` (its pipes) written to
/// as the server writes, into a real player and engine.
@Suite struct PhonesAsAnInput {
    let g64 = VelocityCurve.square.gain(velocity: 64)

    func classroom() -> Classroom {
        Classroom(bells: (60...72).map { ClassroomBell(note: $0, name: "", damps: true) })
    }

    @Test func aPhonesStrikePlaysAtItsArrivalAndIsAnsweredAndAPhoneThatLeavesReleasesItsBell() throws {
        let rig = Rig(longBells(3))
        let link = try ClassroomLink()
        let input = WebInput(
            link: link, classroom: classroom(), channel: 0, joinURL: "http://127.0.0.1:8080/", joined: { 2 })
        let strike = rig.at(100)
        #expect(link.send(.noteOn(device: 3, note: 62, velocity: 64, arrival: strike)))
        #expect(link.send(.noteOn(device: 4, note: 61, velocity: 64, arrival: strike)))
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(input.strikes == 2)
        let answered = link.takeQueued()
        #expect(answered.map(\.device) == [3, 4] && answered.map(\.note) == [62, 61])
        #expect(answered.allSatisfy { $0.arrival == strike })
        // Device 3 leaves at 1,000: its D4 is damped, device 4's C♯4 rings on.
        #expect(link.send(.gone(device: 3, arrival: rig.at(1_000))))
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(2_000)
        #expect(abs(rig.out[164] - 2 * g64) < 1e-6 && abs(rig.out[1_063] - 2 * g64) < 1e-6)
        #expect(abs(rig.out[1_112] - g64) < 1e-6)
        // The pages' lights: what sounds after the last period.
        _ = input.drain(ready: false, player: rig.player)
        #expect(link.soundingNotes == [61])
        #expect(input.statusText == "classroom http://127.0.0.1:8080/ code \(input.classroom.code.digits) · 2 devices")
    }

    @Test func theTeachersVolumeDampAndRoomReachThePlayerAndTheSession() throws {
        let rig = Rig(longBells(1), room: .church)
        let session = RecordingSession()
        rig.player.session = session
        let link = try ClassroomLink()
        let input = WebInput(link: link, classroom: classroom(), channel: 0, joinURL: "", joined: { 0 })
        #expect(link.send(.noteOn(device: 1, note: 60, velocity: 64, arrival: rig.at(100))))
        #expect(link.send(.volume(decibels: -6.5)))
        #expect(link.send(.reverb(index: 2)))
        #expect(link.send(.reverb(index: 9))) // no such room: not asked
        #expect(link.send(.dampAll(arrival: rig.at(100) + .nanoseconds(1))))
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(1_000)
        #expect(rig.player.masterDecibels == -6.5 && link.masterCentibels.load(ordering: .relaxed) == -650)
        // The room asked of the session; the room published is the player's (the session has not
        // changed it: still the church, the teacher's menu's fourth).
        #expect(session.requests == [.room(.hall)] && link.roomIndex.load(ordering: .relaxed) == 3)
        // Struck and damped in the same period: 48 frames of release after 164 and nothing after.
        #expect(rig.out[164] > 0)
        #expect(rig.sounding(164 + 48..<1_000).isEmpty)
    }

    /// The teacher's set menu: the request reaches the session with the moment it arrived and
    /// the phones' channel; the set the engine reports back (once it has played the program
    /// change) is published for the server, the loop looking again within 20 ms until then.
    @Test func theTeachersSetReachesTheSessionAndTheEnginesSetIsPublished() throws {
        let bank = SampleBank(samples: [constant(0.5, 30_000)], sampleRate: 48_000)
        let key = KeySettings(note: 60, sampleIndex: 0, noteOff: release48)
        let sets = InstrumentSets(
            sets: ["a", "b", "c"].enumerated().map {
                InstrumentSet(name: $0.element, program: $0.offset, bank: nil, instrument: Instrument(keys: [key]))
            })
        let rig = Rig(Engine(bank: bank, sets: sets, configuration: EngineConfiguration(sampleRate: 48_000)))
        // The session's part, as the live session does it: the set's program change.
        final class ChoosingSession: SessionRequestHandler {
            weak var player: LivePlayer?
            var requests: [SessionRequest] = []
            func carryOut(_ request: SessionRequest) {
                requests.append(request)
                if case .set(let index, let channel, let arrival) = request {
                    player?.chooseSet(program: index, bank: nil, channel: channel, arrival: arrival)
                }
            }
        }
        let session = ChoosingSession()
        session.player = rig.player
        rig.player.session = session
        let link = try ClassroomLink()
        let input = WebInput(link: link, classroom: classroom(), channel: 4, joinURL: "", joined: { 0 })
        #expect(input.pollTimeoutMilliseconds == nil)
        let arrival = rig.at(100)
        #expect(link.send(.set(index: 2, arrival: arrival)))
        _ = input.drain(ready: true, player: rig.player)
        #expect(session.requests == [.set(index: 2, channel: 4, arrival: arrival)])
        #expect(link.setIndex.load(ordering: .relaxed) == 0 && input.pollTimeoutMilliseconds == 20)
        // The program change plays at 164: the engine reports set "c" after that period.
        _ = rig.at(300)
        _ = input.drain(ready: false, player: rig.player)
        #expect(rig.player.engineSet(channel: 4) == 2 && rig.player.engineSet(channel: 0) == 0)
        #expect(link.setIndex.load(ordering: .relaxed) == 2 && input.pollTimeoutMilliseconds == nil)
    }
}
