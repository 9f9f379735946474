import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysModel
import EngineTestSupport
import Testing

/// The driver's MIDI input (JACK's `midi_in`) over a fake port graph.
@Suite struct DriverMIDIInput {
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
        clock.now = rig.at(1_000)
        graph.disconnect("vmpk:out")
        _ = input.drain(ready: false, player: rig.player)
        #expect(transcript.lines.last == "disconnected JACK MIDI vmpk:out; released 1 held note")
        _ = rig.at(2_000)
        #expect(!rig.player.isSounding(note: 60))
    }
}
