import AllocationCounter
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

@Suite struct Scheduling {
    @Test func scheduledEventsPlayAtTheirFramesWithoutHoldingUpLiveOnes() {
        let (samples, keys) = impulseKeys()
        let e = makeEngine(samples: samples, keys: keys)
        // A note scheduled 10,000 frames ahead, then live notes before it.
        #expect(e.schedule(.noteOn(frame: 10_000, note: 62, velocity: 127)))
        e.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 5_000, note: 61, velocity: 127))
        let out = render(e, 12_000)
        #expect(out.indices.filter { out[$0] != 0 } == [100, 5_001, 10_002])
        #expect(e.lateEvents.load(ordering: .relaxed) == 0)
    }

    @Test func cancellingDropsOnlyThatChannelsPendingEvents() {
        let (samples, keys) = impulseKeys()
        let e = makeEngine(samples: samples, keys: keys)
        e.enqueue(.control(frame: 0, channel: 15, controller: 7, value: 127))
        #expect(e.schedule(.noteOn(frame: 100, channel: 15, note: 60, velocity: 127)))
        #expect(e.schedule(.noteOn(frame: 2_000, channel: 0, note: 61, velocity: 127)))
        #expect(e.schedule(.noteOn(frame: 3_000, channel: 15, note: 62, velocity: 127)))
        _ = render(e, 1_000) // the first has played
        e.cancelScheduled(channel: 15)
        #expect(e.schedule(.noteOn(frame: 4_000, channel: 15, note: 63, velocity: 127)))
        let out = render(e, 5_000)
        // Channel 0's note stays; channel 15's pending one goes; the one after the cancel plays.
        #expect(out.indices.filter { out[$0] != 0 }.map { $0 + 1_000 } == [2_001, 4_003])
        // Cancelling every channel drops everything pending.
        #expect(e.schedule(.noteOn(frame: 7_000, channel: 0, note: 64, velocity: 127)))
        #expect(e.schedule(.noteOn(frame: 7_500, channel: 15, note: 65, velocity: 127)))
        e.cancelScheduled(channel: nil)
        #expect(render(e, 2_000).allSatisfy { $0 == 0 })
        #expect(e.isSilent())
    }

    @Test func soundingNotesFollowTheVoices() {
        let e = makeEngine(
            samples: [constant(1, 1_000), constant(1, 3_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 72, sampleIndex: 1)])
        #expect(!e.isSounding(note: 60))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        e.enqueue(.noteOn(frame: 0, note: 72, velocity: 100))
        _ = render(e, 64)
        #expect(e.isSounding(note: 60) && e.isSounding(note: 72) && !e.isSounding(note: 61))
        #expect(
            e.soundingNotesLow.load(ordering: .relaxed) == 1 << 60
                && e.soundingNotesHigh.load(ordering: .relaxed) == 1 << 8)
        _ = render(e, 1_000) // C4's sample has ended
        #expect(!e.isSounding(note: 60) && e.isSounding(note: 72))
        _ = render(e, 2_000)
        #expect(e.soundingNotesLow.load(ordering: .relaxed) == 0 && e.soundingNotesHigh.load(ordering: .relaxed) == 0)
    }
}

@Suite struct RecordingTap {
    @Test func passesWholePeriodsInOrderAcrossTheWrapAndCountsDrops() {
        let tap = AudioTap(frameCapacity: 10, frameByteCount: 4)
        var got: [UInt8] = []
        func push(_ frames: Int, from value: UInt8) -> Bool {
            let bytes = (0..<frames * 4).map { value &+ UInt8($0) }
            return bytes.withUnsafeBytes { tap.push($0.baseAddress!, frameCount: frames) }
        }
        #expect(push(6, from: 0))
        #expect(!push(6, from: 100)) // 12 frames do not fit in 10
        #expect(tap.droppedFrames.load(ordering: .relaxed) == 6)
        #expect(tap.read { got += $0 } == 24)
        #expect(push(6, from: 50)) // wraps: 4 frames at the end, 2 at the start
        var runs = 0
        #expect(
            tap.read {
                got += $0
                runs += 1
            } == 24)
        #expect(runs == 2)
        let want: [UInt8] = (0..<24).map { UInt8($0) } + (0..<24).map { 50 + UInt8($0) }
        #expect(got == want)
        #expect(tap.read { _ in } == 0)
    }

    @Test func pushingNeverAllocates() {
        let tap = AudioTap(frameCapacity: 48_000, frameByteCount: 8)
        let period = [UInt8](repeating: 7, count: 64 * 8)
        period.withUnsafeBytes { bytes in
            bellkeys_allocations_start()
            for _ in 0..<2_000 {
                _ = tap.read { _ in }
                tap.push(bytes.baseAddress!, frameCount: 64)
            }
            #expect(bellkeys_allocations_stop() == 0)
        }
    }
}
