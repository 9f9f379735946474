import BellkeysControl
import BellkeysEngine
import BellkeysLive
import EngineTestSupport
import Glibc
import Testing

/// An input that records how it was drained and answers what the test says.
final class ScriptedInput: LiveInput {
    let pipe = Pipe()
    var outcome = InputOutcome.carryOn
    var timeout: Int32?
    private(set) var drains: [Bool] = []
    var descriptors: [FileDescriptor] { [FileDescriptor(pipe.read)] }
    var pollTimeoutMilliseconds: Int32? { timeout }
    func drain(ready: Bool, player: LivePlayer) -> InputOutcome {
        drains.append(ready)
        if ready { pipe.drain() }
        return outcome
    }
}

/// The session's side of the loop, recorded.
final class RecordingDelegate: LiveLoopDelegate {
    private(set) var passes = 0, statuses = 0
    private(set) var said: [String] = []
    var loopIsAtRest = true
    func loopOutputSaid(_ line: String) { said.append(line) }
    func loopDidPass() { passes += 1 }
    func loopStatusDue() { statuses += 1 }
}

/// The control thread's poll loop with fake inputs, fake signals and the in-memory output.
@Suite struct PollLoop {
    func make(_ inputs: [ScriptedInput], clock: TestClock = TestClock(), wake: Int32? = nil)
        -> (LiveLoop, Rig, FakeSignals, RecordingDelegate)
    {
        let rig = Rig(impulseBells()), signals = FakeSignals()
        rig.output.wakeDescriptor = wake.map(FileDescriptor.init)
        let loop = LiveLoop(
            inputs: inputs, player: rig.player, output: rig.output, signals: signals, statusSeconds: 0.25,
            clock: clock.read)
        return (loop, rig, signals, RecordingDelegate())
    }

    @Test func everyInputIsDrainedEachPassAndOnlyAReadyOneIsToldItIsReady() {
        let a = ScriptedInput(), b = ScriptedInput()
        a.timeout = 1
        let (loop, _, _, delegate) = make([a, b])
        b.pipe.poke()
        #expect(loop.pass(delegate: delegate) == nil)
        #expect(a.drains == [false] && b.drains == [true])
        // Nothing ready: both drained again (an input keeps its own time, as the Esc key's wait).
        #expect(loop.pass(delegate: delegate) == nil)
        #expect(a.drains == [false, false] && b.drains == [true, false])
        #expect(delegate.passes == 2)
    }

    @Test func anInputThatQuitsOrBreaksEndsTheLoopBeforeTheInputsAfterIt() {
        let a = ScriptedInput(), b = ScriptedInput()
        a.timeout = 1
        let (loop, _, _, delegate) = make([a, b])
        a.outcome = .quit(reason: "Esc")
        #expect(loop.run(delegate: delegate) == .quit(reason: "Esc"))
        #expect(b.drains.isEmpty && delegate.passes == 0)
        a.outcome = .failed(reason: "the MIDI input failed", message: "gone")
        #expect(loop.pass(delegate: delegate) == .inputFailed(reason: "the MIDI input failed", message: "gone"))
    }

    /// SIGHUP asks the session for a reload through the player, as an input asks for a room;
    /// SIGINT and SIGTERM end the loop, named.
    @Test func aHangUpAsksForAReloadAndAnInterruptOrATerminateStops() {
        let a = ScriptedInput()
        a.timeout = 1
        let (loop, rig, signals, delegate) = make([a])
        let session = RecordingSession()
        rig.player.session = session
        signals.raise(SIGHUP)
        #expect(loop.pass(delegate: delegate) == nil)
        #expect(session.requests == [.reload])
        signals.raise(SIGHUP)
        signals.raise(SIGTERM)
        #expect(loop.pass(delegate: delegate) == .quit(reason: "SIGTERM"))
        #expect(session.requests == [.reload, .reload])
        signals.raise(SIGINT)
        #expect(loop.pass(delegate: delegate) == .quit(reason: "SIGINT"))
    }

    @Test func aFailedOutputEndsTheLoopInTheDriversWords() {
        let a = ScriptedInput()
        a.timeout = 1
        let (loop, rig, _, delegate) = make([a])
        rig.output.failure = "the sound device memory failed: unplugged"
        #expect(loop.pass(delegate: delegate) == .outputFailed("the sound device memory failed: unplugged"))
    }

    @Test func aTuneThatHasRungOutEndsTheLoop() {
        let a = ScriptedInput()
        a.timeout = 1
        let clock = TestClock()
        let (loop, rig, _, delegate) = make([a], clock: clock)
        clock.now = rig.at(0)
        rig.player.startTune([.noteOn(frame: 100, note: 60, velocity: 127)], endFrame: 200, arrival: clock.now)
        // The tune starts a fifth of a second (9,600 frames) after the frame its start plays at (64).
        clock.now = rig.at(9_800)
        #expect(loop.pass(delegate: delegate) == nil)
        // Played, then rung out (the impulse is 16 frames long) and past its end.
        clock.now = rig.at(12_000)
        #expect(loop.pass(delegate: delegate) == .tuneRungOut)
        #expect(rig.sounding(0..<12_000) == [9_764])
    }

    @Test func theStatusIsDrawnAtTheIntervalGiven() {
        let a = ScriptedInput()
        a.timeout = 1
        let clock = TestClock()
        let (loop, _, _, delegate) = make([a], clock: clock)
        for milliseconds in [1_000, 1_100, 1_240, 1_250, 1_400, 1_510] {
            clock.now = MonotonicInstant(nanoseconds: UInt64(milliseconds) * 1_000_000)
            _ = loop.pass(delegate: delegate)
        }
        // At 1.0 s, then 1.25 s, then 1.51 s.
        #expect(delegate.statuses == 3)
    }

    @Test func atRestTheLoopSleepsUntilSomethingHappens() {
        let a = ScriptedInput()
        let clock = TestClock()
        let (loop, rig, _, delegate) = make([a], clock: clock)
        clock.now = rig.at(0)
        // Not yet drawn at rest: the usual pace.
        #expect(loop.waitMilliseconds(delegate: delegate) == LiveLoop.busyMilliseconds)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(delegate.statuses == 1)
        // Drawn at rest: no limit.
        #expect(loop.waitMilliseconds(delegate: delegate) == -1)
        // An input's own wait still counts (a lone Esc).
        a.timeout = 30
        #expect(loop.waitMilliseconds(delegate: delegate) == 30)
        a.timeout = nil
        // A note played: queued for the engine, not yet rendered, so not at rest.
        clock.now = rig.at(50)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: nil, arrival: clock.now)
        #expect(loop.waitMilliseconds(delegate: delegate) == LiveLoop.busyMilliseconds)
        // Rendered and sounding at the period's end (the impulse at frame 114 sounds for 16
        // frames, into the next period).
        clock.now = rig.at(120)
        #expect(rig.player.voiceCount == 1 && !rig.player.isAtRest)
        #expect(loop.waitMilliseconds(delegate: delegate) == LiveLoop.busyMilliseconds)
        // Rung out: the next pass draws the status at once (the key goes dark), then sleeps.
        clock.now = rig.at(200)
        #expect(rig.player.isAtRest)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(delegate.statuses == 2)
        #expect(loop.waitMilliseconds(delegate: delegate) == -1)
        // The session waiting for bells to ring out (a reload) keeps the loop awake.
        delegate.loopIsAtRest = false
        #expect(loop.waitMilliseconds(delegate: delegate) == LiveLoop.busyMilliseconds)
    }

    @Test func aWakeUpAtRestThatChangesOnlyTheStatusIsDrawnBeforeSleepingAgain() {
        let a = ScriptedInput()
        let clock = TestClock()
        let (loop, rig, _, delegate) = make([a], clock: clock)
        clock.now = rig.at(0)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(loop.waitMilliseconds(delegate: delegate) == -1 && delegate.statuses == 1)
        // A key that only moves the volume, 10 ms later: the status is not due yet (0.25 s),
        // so the loop keeps its pace until it has drawn it.
        clock.now += .nanoseconds(10_000_000)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(delegate.statuses == 1)
        #expect(loop.waitMilliseconds(delegate: delegate) == LiveLoop.busyMilliseconds)
        clock.now += .nanoseconds(250_000_000)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(delegate.statuses == 2)
        #expect(loop.waitMilliseconds(delegate: delegate) == -1)
    }

    @Test func theOutputWakesTheLoopAndWhatItSaysReachesTheSession() {
        let a = ScriptedInput()
        // The output's wake-up (an eventfd in the drivers): a pipe, as the loop reads either.
        let wakeup = Pipe()
        let clock = TestClock()
        let (loop, rig, _, delegate) = make([a], clock: clock, wake: wakeup.read)
        clock.now = rig.at(0)
        a.pipe.poke()
        _ = loop.pass(delegate: delegate)
        #expect(loop.waitMilliseconds(delegate: delegate) == -1)
        // The render thread after underruns: the loop wakes (it would sleep for good without
        // it), the driver does its upkeep at the loop's clock, and its line is said.
        rig.output.linesToSay = ["sound: the buffer grows"]
        clock.now += .nanoseconds(1_000_000)
        wakeup.poke()
        _ = loop.pass(delegate: delegate)
        #expect(delegate.said == ["sound: the buffer grows"])
        #expect(rig.output.maintained.last == clock.now)
        // Read empty: not ready again until the next signal.
        var descriptor = pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 0) == 0)
    }
}
