import BellkeysClassroom
import BellkeysClassroomServer
import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysModel
import EngineTestSupport
import Testing

/// The driver's MIDI input (JACK's `midi_in`) over a fake port graph, and the classroom's
/// phones through a real `ClassroomLink` (its pipes), written to as the server writes.
@Suite struct DriverAndClassroomInputs {
    let g64 = VelocityCurve.square.gain(velocity: 64)

    @Test func physicalMIDIPortsAreConnectedOnceAndADisconnectionIsReported() {
        let rig = Rig(impulseBells())
        let graph = FakePortGraph(), transcript = Transcript()
        graph.physical = ["system:midi_capture_1"]
        graph.midiConnections = ["a2j:Nord [28] (capture): Nord MIDI"]
        let input = JACKMIDIInput(
            output: graph, console: transcript.console, connectsPhysicalPorts: true, verbose: false,
            clock: TestClock().read)
        input.connectPresent()
        #expect(graph.midiConnections == ["a2j:Nord [28] (capture): Nord MIDI", "system:midi_capture_1"])
        #expect(input.connectedNames == graph.midiConnections)
        #expect(
            transcript.lines == [
                "connected JACK MIDI a2j:Nord [28] (capture): Nord MIDI", "connected JACK MIDI system:midi_capture_1",
            ])
        // The user takes the physical port away (qjackctl): it stays away.
        graph.disconnect("system:midi_capture_1")
        #expect(input.drain(ready: false, player: rig.player) == .carryOn)
        #expect(graph.midiConnections == ["a2j:Nord [28] (capture): Nord MIDI"])
        #expect(transcript.lines.last == "disconnected JACK MIDI system:midi_capture_1")
    }

    @Test func withASequencerTheDriverConnectsNoKeyboardItself() {
        let graph = FakePortGraph(), transcript = Transcript()
        graph.physical = ["system:midi_capture_1"]
        let input = JACKMIDIInput(
            output: graph, console: transcript.console, connectsPhysicalPorts: false, verbose: false,
            clock: TestClock().read)
        input.connectPresent()
        #expect(graph.midiConnections.isEmpty && transcript.lines.isEmpty)
    }

    @Test func notesPlayedOnTheRenderThreadAreReleasedWhenTheirSenderGoes() {
        let rig = Rig(longBells(1))
        let graph = FakePortGraph(), transcript = Transcript(), clock = TestClock()
        let input = JACKMIDIInput(
            output: graph, console: transcript.console, connectsPhysicalPorts: false, verbose: false,
            clock: clock.read)
        graph.midiConnections = ["vmpk:out"]
        input.connectPresent()
        // A JACK cycle as the driver runs it: the event played at its frame on the render thread.
        _ = rig.at(100)
        let first = rig.mixer.beginPeriod(frameCount: 64, nanoseconds: Rig.nanoseconds(Int(rig.mixer.frame)))
        rig.mixer.playNow(.noteOn(frame: first + 10, note: 60, velocity: 64))
        rig.mixer.render(frameCount: 64)
        #expect(input.drain(ready: false, player: rig.player) == .carryOn)
        #expect(rig.player.isSounding(note: 60))
        clock.nanoseconds = rig.at(1_000)
        graph.disconnect("vmpk:out")
        _ = input.drain(ready: false, player: rig.player)
        #expect(transcript.lines.last == "disconnected JACK MIDI vmpk:out; released 1 held note")
        _ = rig.at(2_000)
        #expect(!rig.player.isSounding(note: 60))
    }

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
        let rig = Rig(longBells(1))
        let link = try ClassroomLink()
        let input = WebInput(link: link, classroom: classroom(), channel: 0, joinURL: "", joined: { 0 })
        var rooms: [Int] = []
        input.setRoom = { rooms.append($0) }
        input.roomIndex = { 3 }
        #expect(link.send(.noteOn(device: 1, note: 60, velocity: 64, arrival: rig.at(100))))
        #expect(link.send(.volume(decibels: -6.5)))
        #expect(link.send(.reverb(index: 2)))
        #expect(link.send(.dampAll(arrival: rig.at(100) + 1)))
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(1_000)
        #expect(rig.player.masterDecibels == -6.5 && link.masterCentibels.load(ordering: .relaxed) == -650)
        #expect(rooms == [2] && link.roomIndex.load(ordering: .relaxed) == 3)
        // Struck and damped in the same period: 48 frames of release after 164 and nothing after.
        #expect(rig.out[164] > 0)
        #expect(rig.sounding(164 + 48..<1_000).isEmpty)
    }

    /// The teacher's set menu: the request reaches the session's choice with the moment it
    /// arrived, and what the engine reports back is published for the server, the loop looking
    /// again within 20 ms until the engine has taken the set.
    @Test func theTeachersSetReachesTheSessionAndTheEnginesSetIsPublished() throws {
        let rig = Rig(longBells(1))
        let link = try ClassroomLink()
        let input = WebInput(link: link, classroom: classroom(), channel: 0, joinURL: "", joined: { 0 })
        var chosen: [(Int, UInt64)] = []
        var engineSet = 0
        input.chooseSet = { chosen.append(($0, $1)) }
        input.currentSet = { engineSet }
        #expect(input.pollTimeoutMilliseconds == nil)
        #expect(link.send(.set(index: 2, arrival: 12_345)))
        _ = input.drain(ready: true, player: rig.player)
        #expect(chosen.count == 1 && chosen[0] == (2, 12_345))
        #expect(link.setIndex.load(ordering: .relaxed) == 0 && input.pollTimeoutMilliseconds == 20)
        engineSet = 2
        _ = input.drain(ready: false, player: rig.player)
        #expect(link.setIndex.load(ordering: .relaxed) == 2 && input.pollTimeoutMilliseconds == nil)
    }
}
