import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

/// A player whose mixer runs JACK-style cycles: events read by the render thread are played
/// at their offset in the cycle (`LiveMixer.playNow`), the rest through the player's stamps.
/// Mono f32; cycle k starts at frame k × frameCount, at that frame's time on a 48 kHz line.
final class CycleRig {
    let mixer: LiveMixer
    let player: LivePlayer
    private(set) var out: [Float] = []
    private let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4_096)

    init(_ engine: Engine, periodFrames: Int = 64) {
        mixer = LiveMixer(engine: engine, channels: 1, format: .f32, maximumPeriodFrames: 64)
        player = LivePlayer(mixer: mixer, engine: engine, periodFrames: periodFrames, masterDecibels: 0)
    }

    deinit { buffer.deallocate() }

    static func nanoseconds(_ frame: Int64) -> UInt64 { UInt64((Double(frame) * 1e9 / 48_000).rounded()) }
    static func arrival(_ frame: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: nanoseconds(frame)) }

    /// The control thread wakes at the start of a cycle of `frameCount` frames (`update`, and
    /// takes what was played), then the cycle runs with `events` (offset in the cycle, message)
    /// read by the render thread.
    func cycle(_ frameCount: Int = 64, _ events: [(Int, MIDIMessage)] = []) {
        player.notePlayedNow(source: 7)
        player.update(arrival: Self.arrival(mixer.frame))
        let first = mixer.beginPeriod(frameCount: frameCount, nanoseconds: Self.nanoseconds(mixer.frame))
        for (offset, message) in events { mixer.playNow(message.event(atFrame: first + Int64(offset))) }
        var pointer: UnsafeMutablePointer<Float> = buffer
        withUnsafePointer(to: &pointer) { mixer.render(frameCount: frameCount, into: $0, tap: nil) }
        out += UnsafeBufferPointer(start: buffer, count: frameCount)
    }

    /// Runs cycles until frame `frame` has been rendered; returns that frame's time.
    func at(_ frame: Int, frameCount: Int = 64) -> MonotonicInstant {
        while Int(mixer.frame) <= frame { cycle(frameCount) }
        return Self.arrival(Int64(frame))
    }

    func sounding(_ range: Range<Int>) -> [Int] { range.filter { out[$0] != 0 } }
}

@Suite struct RenderThreadInput {
    let g64 = VelocityCurve.square.gain(velocity: 64)

    /// A reloaded map's engine as the program builds one: nothing queued (CC7 at its default).
    func freshBells(_ values: [Float]) -> Engine {
        makeEngine(
            samples: values.map { constant($0, 30_000) },
            keys: values.indices.map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: release48) },
            unityVolume: false)
    }

    func longBells(_ values: [Float]) -> Engine {
        makeEngine(
            samples: values.map { constant($0, 30_000) },
            keys: values.indices.map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: release48) })
    }

    @Test func whatTheRenderThreadPlayedIsHeldAndReleasedWhenItsSourceGoesAway() {
        let rig = CycleRig(longBells([0.5, 0.25]))
        _ = rig.at(100)
        rig.cycle(
            64,
            [
                (10, .noteOn(channel: 0, note: 60, velocity: 127)), (20, .noteOn(channel: 0, note: 61, velocity: 127)),
                (30, .noteOff(channel: 0, note: 61, velocity: 0)),
            ])
        // Struck at frames 138 and 148 exactly (no latency); the second let go at 158.
        #expect(rig.out[137] == 0 && rig.out[138] == 0.5 && rig.out[148] == 0.75)
        // The sender disconnects at frame 1,000: its held C4 is released one period later.
        let arrival = rig.at(1_000)
        rig.player.notePlayedNow(source: 7)
        #expect(rig.player.release(source: 7, arrival: arrival) == 1)
        _ = rig.at(2_000)
        #expect(rig.out[1_063] == 0.5)
        #expect(rig.sounding(1_064 + 48..<2_000).isEmpty)
    }

    @Test func theLoopRecordsTheRenderThreadsEventsAtTheirFrames() {
        let (samples, keys) = impulseKeys()
        let rig = CycleRig(makeEngine(samples: samples, keys: keys))
        #expect(rig.player.toggleLoop(arrival: rig.at(1_000)) == .started)
        // The loop starts at the frame the stamp gives: 1,000 + 64. Struck in the cycle at 1,152.
        _ = rig.at(1_100)
        rig.cycle(64, [(5, .noteOn(channel: 0, note: 60, velocity: 127))])
        let struck = 1_152 + 5
        #expect(rig.sounding(1_000..<1_216) == [struck])
        _ = rig.at(13_000)
        guard case .closed(let length, 1) = rig.player.toggleLoop(arrival: rig.at(13_000)) else {
            Issue.record("the loop did not close with one note")
            return
        }
        let frames = Int(length)
        _ = rig.at(13_064 + 3 * frames)
        // Every repeat lands the same distance into the loop as the strike did.
        let start = 1_064
        let repeats = rig.sounding(13_000..<13_064 + 3 * frames)
        #expect(length == 13_064 - 1_064)
        #expect(repeats.count >= 2)
        #expect(repeats.allSatisfy { ($0 - start) % frames == struck - start })
    }

    @Test func aReloadedMapHearsTheControllersTheRenderThreadPlayed() {
        let old = longBells([0.25]), new = freshBells([0.5])
        let rig = CycleRig(old)
        rig.cycle(64, [(0, .controlChange(channel: 0, controller: 7, value: 64))])
        #expect(rig.player.install(new, masterDecibels: nil, arrival: rig.at(1_000)))
        rig.cycle(64, [])
        rig.cycle(64, [(0, .noteOn(channel: 0, note: 60, velocity: 127))])
        _ = rig.at(2_000)
        // The new map's C4 at CC7 64, as played before the reload.
        let struck = rig.out.indices.first { rig.out[$0] != 0 }!
        #expect(abs(rig.out[struck + 10] - 0.5 * g64) < 1e-6)
    }

    @Test func stampedEventsFollowTheServersBufferSize() {
        let (samples, keys) = impulseKeys()
        let rig = CycleRig(makeEngine(samples: samples, keys: keys))
        _ = rig.at(1_000)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: nil, arrival: CycleRig.arrival(1_000))
        _ = rig.at(2_000)
        // The server switches to 256-frame cycles: the same constant latency of one (new) period.
        _ = rig.at(3_000, frameCount: 256)
        rig.player.play(.noteOn(channel: 0, note: 60, velocity: 127), from: nil, arrival: CycleRig.arrival(3_000))
        _ = rig.at(4_000, frameCount: 256)
        #expect(rig.sounding(0..<4_000) == [1_064, 3_256])
    }

    /// A struck bell on the new map, let go at once: with the pedal up it is damped (48 frames),
    /// with it down it rings on. Returns whether it still sounds 1,000 frames later.
    func ringsOn(_ rig: CycleRig) -> Bool {
        rig.cycle(
            64, [(0, .noteOn(channel: 0, note: 60, velocity: 127)), (1, .noteOff(channel: 0, note: 60, velocity: 0))])
        let struck = rig.out.count - 64
        _ = rig.at(rig.out.count + 1_000)
        return rig.out[struck + 1_000] != 0
    }

    @Test func aPedalLiftedWhileTheMapLoadsIsUpOnTheNewMap() {
        let rig = CycleRig(longBells([0.25]))
        rig.cycle(64, [(0, .controlChange(channel: 0, controller: 64, value: 127))])
        rig.cycle(64)
        // The map loads: meanwhile the render thread plays a pedal lift the player has not yet
        // taken (no control-thread wake-up between these cycles).
        let first = rig.mixer.beginPeriod(frameCount: 64, nanoseconds: CycleRig.nanoseconds(rig.mixer.frame))
        rig.mixer.playNow(MIDIMessage.controlChange(channel: 0, controller: 64, value: 0).event(atFrame: first + 3))
        var buffer = [Float](repeating: 0, count: 64)
        buffer.withUnsafeMutableBufferPointer { b in
            var pointer = b.baseAddress!
            withUnsafePointer(to: &pointer) { rig.mixer.render(frameCount: 64, into: $0, tap: nil) }
        }
        let new = longBells([0.5])
        #expect(rig.player.install(new, masterDecibels: nil, arrival: CycleRig.arrival(rig.mixer.frame)))
        #expect(!ringsOn(rig))
    }

    @Test func aPedalLiftedBetweenTheHandOverAndTheNewEnginesStartReachesIt() {
        let rig = CycleRig(longBells([0.25]))
        rig.cycle(64, [(0, .controlChange(channel: 0, controller: 64, value: 127))])
        rig.cycle(64)
        // The render thread is inside a cycle of the old engine when the control thread hands
        // the new one over; the lift it plays next goes to the old engine only.
        let first = rig.mixer.beginPeriod(frameCount: 64, nanoseconds: CycleRig.nanoseconds(rig.mixer.frame))
        let new = longBells([0.5])
        #expect(rig.player.install(new, masterDecibels: nil, arrival: CycleRig.arrival(rig.mixer.frame)))
        rig.mixer.playNow(MIDIMessage.controlChange(channel: 0, controller: 64, value: 0).event(atFrame: first + 3))
        var buffer = [Float](repeating: 0, count: 64)
        buffer.withUnsafeMutableBufferPointer { b in
            var pointer = b.baseAddress!
            withUnsafePointer(to: &pointer) { rig.mixer.render(frameCount: 64, into: $0, tap: nil) }
        }
        rig.cycle(64) // the new engine starts; the player then learns of the lift
        #expect(rig.player.engine === new)
        #expect(!ringsOn(rig))
    }

    @Test func quittingStopsTheRenderThreadsStrikes() {
        let (samples, keys) = impulseKeys()
        let rig = CycleRig(makeEngine(samples: samples, keys: keys))
        _ = rig.at(100)
        rig.player.silence(arrival: CycleRig.arrival(rig.mixer.frame))
        rig.cycle(64, [(5, .noteOn(channel: 0, note: 60, velocity: 127))])
        _ = rig.at(1_000)
        #expect(rig.sounding(0..<1_000).isEmpty)
    }

    @Test func theLoopKeepsFrameOrderWhenInputsStampDifferently() {
        let (samples, keys) = impulseKeys()
        let rig = CycleRig(makeEngine(samples: samples, keys: keys))
        #expect(rig.player.toggleLoop(arrival: rig.at(1_000)) == .started)
        _ = rig.at(2_000)
        // A stamped note (one period after its arrival, 2,048 + 64 = 2,112) and, drained after
        // it, a JACK note at its frame in an earlier cycle (2,048 + 10).
        rig.player.play(.noteOn(channel: 0, note: 62, velocity: 127), from: nil, arrival: CycleRig.arrival(2_048))
        rig.cycle(64, [(10, .noteOn(channel: 0, note: 61, velocity: 127))])
        _ = rig.at(14_000)
        let outcome = rig.player.toggleLoop(arrival: rig.at(14_000))
        guard case .closed(let length, 2) = outcome else {
            Issue.record("the loop did not close with two notes: \(outcome)")
            return
        }
        _ = rig.at(14_064 + 2 * Int(length))
        // Both notes repeat, each its own distance into the loop: none is held back.
        let start = 1_064, frames = Int(length)
        let repeats = rig.sounding(14_064..<14_064 + 2 * frames).map { ($0 - start) % frames }
        #expect(Set(repeats) == [2_058 + 1 - start, 2_112 + 2 - start])
    }
}
