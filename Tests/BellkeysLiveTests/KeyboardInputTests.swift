import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysModel
import BellkeysTerminal
import EngineTestSupport
import Testing

/// The computer keyboard as a live input, over a fake terminal: the keys' notes at their exact
/// frames on the input's channel, key releases with the kitty protocol, the lone Esc, the
/// commands.
@Suite struct ComputerKeyboard {
    let g100 = VelocityCurve.square.gain(velocity: 100)

    func make(_ rig: Rig, channel: UInt8 = 0) -> (KeyboardInput, FakeTerminal, TestClock, Transcript) {
        let terminal = FakeTerminal(), clock = TestClock(), transcript = Transcript()
        let input = KeyboardInput(terminal: terminal, console: transcript.console, channel: channel, clock: clock.read)
        return (input, terminal, clock, transcript)
    }

    @Test func aKeyPlaysItsNoteAtVelocity100OnTheInputsChannelOnePeriodAfterItIsRead() {
        let rig = Rig(impulseBells())
        let (input, terminal, clock, _) = make(rig, channel: 2)
        // Channel 3 at full volume (as the rig's channel 1), channel 1 silent: only channel 3 sounds.
        rig.player.play(.controlChange(channel: 2, controller: 7, value: 127), from: nil, arrival: rig.at(0))
        rig.player.play(.controlChange(channel: 0, controller: 7, value: 0), from: nil, arrival: rig.at(0))
        clock.now = rig.at(200)
        terminal.type("d") // E4: its impulse 4 frames into the bell
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        clock.now = rig.at(500)
        terminal.type("K") // C5, either case
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        _ = rig.at(1_000)
        #expect(rig.sounding(0..<1_000) == [268, 576])
        #expect(rig.out[268] == g100 && rig.out[576] == g100)
    }

    @Test func withKeyReleasesADampedBellStopsWhenItsKeyComesUp() {
        let rig = Rig(longBells(1))
        let (input, terminal, clock, _) = make(rig)
        // The terminal answers the kitty keyboard query: releases are on.
        terminal.type("\u{1B}[?0u")
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(terminal.kittyEnabled && input.keyboard.reportsReleases)
        clock.now = rig.at(200)
        terminal.type("\u{1B}[97u") // a pressed
        _ = input.drain(ready: true, player: rig.player)
        clock.now = rig.at(1_000)
        terminal.type("\u{1B}[97;1:3u") // a released
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(2_000)
        #expect(rig.sounding(0..<2_000).first == 264)
        #expect(abs(rig.out[1_063] - g100) < 1e-6)
        #expect(rig.sounding(1_064 + 48..<2_000).isEmpty)
    }

    @Test func aLoneEscWaitsForTheRestOfASequenceThenQuits() {
        let rig = Rig(impulseBells())
        let (input, terminal, clock, _) = make(rig)
        clock.now = 1_000_000_000
        terminal.type("\u{1B}")
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(input.pollTimeoutMilliseconds == 30)
        clock.now += .nanoseconds(24_000_000)
        #expect(input.drain(ready: false, player: rig.player) == .carryOn)
        clock.now += .nanoseconds(2_000_000)
        #expect(input.drain(ready: false, player: rig.player) == .quit(reason: "Esc"))
        // An arrow key's sequence is a key, not Esc.
        terminal.type("\u{1B}[A")
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(rig.player.masterDecibels == TerminalKeyboard.volumeStepDecibels)
    }

    @Test func theOctaveKeysMoveTheNotesTheKeysPlay() {
        let rig = Rig(impulseBells())
        let (input, terminal, clock, _) = make(rig)
        clock.now = rig.at(200)
        terminal.type("\u{1B}[Ca") // → then a: C5, its impulse 12 frames into the bell
        _ = input.drain(ready: true, player: rig.player)
        #expect(input.keyboard.lowestNote == 72)
        clock.now = rig.at(500)
        terminal.type("<<k") // two octaves down, k: C4
        _ = input.drain(ready: true, player: rig.player)
        clock.now = rig.at(600)
        terminal.type("\u{1B}[Ds") // ← then s: D2, no bell of the 13
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(1_000)
        #expect(rig.sounding(0..<1_000) == [276, 564])
        #expect(rig.player.engine.ignoredNotes.load(ordering: .relaxed) == 1)
        // An instrument higher up starts the keys on its own octave.
        let high = KeyboardInput(
            terminal: FakeTerminal(), console: Transcript().console, channel: 0, lowestNote: 72, clock: clock.read)
        #expect(high.keyboard.note(for: .character("a")) == 72)
    }

    @Test func theTerminalGoingAwayQuits() {
        let rig = Rig(impulseBells())
        let (input, terminal, _, _) = make(rig)
        terminal.waiting = nil
        #expect(input.drain(ready: true, player: rig.player) == .quit(reason: "the terminal closed"))
    }

    @Test func commandsReachThePlayerAndTheSession() {
        let rig = Rig(longBells(2, level: 0.5))
        let (input, terminal, clock, transcript) = make(rig, channel: 2)
        rig.player.play(.controlChange(channel: 2, controller: 7, value: 127), from: nil, arrival: rig.at(0))
        let session = RecordingSession()
        rig.player.session = session
        clock.now = rig.at(100)
        terminal.type("aw")
        _ = input.drain(ready: true, player: rig.player)
        clock.now = rig.at(1_000)
        terminal.type("x") // damp all
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(2_000)
        // Both bells (at half scale) from 164, damped at 1,064 over 48 frames.
        #expect(abs(rig.out[164] - g100) < 1e-6 && abs(rig.out[1_063] - g100) < 1e-6)
        #expect(rig.sounding(1_064 + 48..<2_000).isEmpty)
        terminal.type("-rp") // 2 dB down, the next room, the next set
        _ = input.drain(ready: true, player: rig.player)
        #expect(session.requests == [.nextRoom, .nextSet(channel: 2, arrival: clock.now)])
        #expect(rig.player.masterDecibels == -2)
        // Enter twice with nothing between: no loop kept, and it says so.
        terminal.type("\r\r")
        _ = input.drain(ready: true, player: rig.player)
        #expect(transcript.lines.contains("loop: recording (Enter closes the loop)"))
        #expect(transcript.lines.last?.hasPrefix("loop: nothing to repeat") == true)
    }
}
