import BellkeysControl
import BellkeysEngine
import Testing

@Suite struct HeldNotesTracking {
    @Test func aLostSourceReleasesItsKeysAndPedal() {
        var held = HeldNotes()
        held.track(source: 1, .noteOn(channel: 0, note: 60, velocity: 100))
        held.track(source: 1, .noteOn(channel: 1, note: 72, velocity: 90))
        held.track(source: 1, .noteOn(channel: 0, note: 64, velocity: 100))
        held.track(source: 1, .noteOff(channel: 0, note: 64, velocity: 0)) // let go already
        held.track(source: 1, .noteOn(channel: 0, note: 67, velocity: 0)) // velocity 0 is a note-off
        held.track(source: 1, .controlChange(channel: 0, controller: 64, value: 127))
        #expect(held.noteCount(source: 1) == 2)
        let messages = held.release(source: 1)
        #expect(
            messages == [
                .noteOff(channel: 0, note: 60, velocity: 0), .controlChange(channel: 0, controller: 64, value: 0),
                .noteOff(channel: 1, note: 72, velocity: 0),
            ])
        #expect(held.release(source: 1).isEmpty)
    }

    @Test func keysAnotherSourceHoldsStayDown() {
        var held = HeldNotes()
        held.track(source: 1, .noteOn(channel: 0, note: 60, velocity: 100))
        held.track(source: 1, .noteOn(channel: 0, note: 62, velocity: 100))
        held.track(source: 1, .controlChange(channel: 0, controller: 64, value: 127))
        held.track(source: 2, .noteOn(channel: 0, note: 60, velocity: 100))
        held.track(source: 2, .controlChange(channel: 0, controller: 64, value: 100))
        #expect(held.release(source: 1) == [.noteOff(channel: 0, note: 62, velocity: 0)])
    }

    @Test func allNotesOffForgetsTheChannel() {
        var held = HeldNotes()
        held.track(source: 1, .noteOn(channel: 0, note: 60, velocity: 100))
        held.track(source: 1, .controlChange(channel: 0, controller: 123, value: 0))
        #expect(held.release(source: 1).isEmpty)
    }
}
