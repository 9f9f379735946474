import AllocationCounter
import BellkeysEngine
import Testing

/// Sample for note `n`: an impulse at index n - 60, so an output frame tells which note
/// started where (frame of the strike + n - 60).
func impulseKeys(ring: Bool = true) -> (samples: [[Float]], keys: [KeySettings]) {
    let samples = (0..<13).map { i in (0..<16).map { $0 == i ? Float(1) : 0 } }
    let keys = (0..<13).map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: ring ? .ring : release48) }
    return (samples, keys)
}

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
        _ = render(e, 1_000)                 // the first has played
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
        let e = makeEngine(samples: [constant(1, 1_000), constant(1, 3_000)],
                           keys: [KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 72, sampleIndex: 1)])
        #expect(!e.isSounding(note: 60))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 100))
        e.enqueue(.noteOn(frame: 0, note: 72, velocity: 100))
        _ = render(e, 64)
        #expect(e.isSounding(note: 60) && e.isSounding(note: 72) && !e.isSounding(note: 61))
        #expect(e.soundingNotesLow.load(ordering: .relaxed) == 1 << 60 && e.soundingNotesHigh.load(ordering: .relaxed) == 1 << 8)
        _ = render(e, 1_000)                 // C4's sample has ended
        #expect(!e.isSounding(note: 60) && e.isSounding(note: 72))
        _ = render(e, 2_000)
        #expect(e.soundingNotesLow.load(ordering: .relaxed) == 0 && e.soundingNotesHigh.load(ordering: .relaxed) == 0)
    }
}

@Suite struct PhraseLoop {
    /// Plays a phrase live, closes the loop, and lets it repeat through the engine.
    @Test func aLoopedPhraseRepeatsAtExactlyItsLength() {
        let (samples, keys) = impulseKeys()
        let e = makeEngine(samples: samples, keys: keys)
        e.enqueue(.control(frame: 0, channel: 15, controller: 7, value: 127))
        var looper = PhraseLooper(minimumFrames: 1_000)
        let start: Int64 = 1_000, length: Int64 = 30_011   // an odd length: no rounding hides
        #expect(looper.toggle(atFrame: start) == .started)
        let played: [EngineEvent] = [
            .noteOn(frame: 1_500, note: 60, velocity: 127), .noteOff(frame: 2_000, note: 60),
            .noteOn(frame: 11_000, note: 64, velocity: 127),
            .noteOn(frame: 30_500, note: 67, velocity: 127),      // still held at the close
        ]
        for event in played {
            looper.record(event)
            e.enqueue(event)
        }
        #expect(looper.toggle(atFrame: start + length) == .closed(lengthFrames: length, noteCount: 3))
        // The loop's own note-off for the held note, at the end of the phrase.
        #expect(looper.phrase.last == EngineEvent(frame: length, status: 0x8F, data1: 67, data2: 0))
        // Render 5 repeats in 64-frame periods, scheduling half a second ahead as bellkeys does.
        let total = Int(start + 6 * length)
        var out = [Float](repeating: 0, count: total)
        var frame = 0
        while frame < total {
            while let event = looper.peek(through: Int64(frame) + 24_000), e.schedule(event) { looper.advance() }
            let n = min(64, total - frame)
            out.withUnsafeMutableBufferPointer { e.render(into: $0.baseAddress! + frame, frameCount: n) }
            frame += n
        }
        var expected: [Int] = []
        for k in 0..<6 {
            for (offset, note) in [(500, 60), (10_000, 64), (29_500, 67)] {
                expected.append(Int(start) + k * Int(length) + offset + note - 60)
            }
        }
        #expect(out.indices.filter { out[$0] != 0 } == expected)
        #expect(e.lateEvents.load(ordering: .relaxed) == 0)
    }

    @Test func closingEmptyOrTooShortDiscardsAndClearForgets() {
        var looper = PhraseLooper(minimumFrames: 12_000)
        #expect(looper.toggle(atFrame: 0) == .started)
        #expect(looper.toggle(atFrame: 50_000) == .discarded)       // no note
        #expect(looper.state == .empty)
        #expect(looper.toggle(atFrame: 0) == .started)
        looper.record(.noteOn(frame: 10, note: 60, velocity: 100))
        #expect(looper.toggle(atFrame: 11_999) == .discarded)       // too short
        #expect(looper.toggle(atFrame: 0) == .started)
        looper.record(.noteOn(frame: 10, note: 60, velocity: 100))
        looper.record(.control(frame: 20, controller: 7, value: 10))   // not recorded
        looper.record(.control(frame: 30, controller: 64, value: 127))
        #expect(looper.toggle(atFrame: 20_000) == .closed(lengthFrames: 20_000, noteCount: 1))
        // Note-on on the loop's channel, the pedal, then the held note's and the pedal's ends.
        #expect(looper.phrase == [EngineEvent(frame: 10, status: 0x9F, data1: 60, data2: 100),
                                  EngineEvent(frame: 30, status: 0xBF, data1: 64, data2: 127),
                                  EngineEvent(frame: 20_000, status: 0x8F, data1: 60, data2: 0),
                                  EngineEvent(frame: 20_000, status: 0xBF, data1: 64, data2: 0)])
        #expect(looper.toggle(atFrame: 30_000) == .busy)
        #expect(looper.peek(through: 20_009) == nil)
        #expect(looper.peek(through: 20_010) == EngineEvent(frame: 20_010, status: 0x9F, data1: 60, data2: 100))
        looper.clear()
        #expect(looper.state == .empty && looper.peek(through: .max) == nil)
    }

    @Test func aFullPhraseKeepsItsFirstEventsAndCountsTheRest() {
        var looper = PhraseLooper(capacity: 4, minimumFrames: 1)
        _ = looper.toggle(atFrame: 0)
        for i in 0..<6 { looper.record(.noteOn(frame: Int64(i), note: 60, velocity: 100)) }
        #expect(looper.phrase.count == 4 && looper.overflowed == 2)
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
        #expect(!push(6, from: 100))            // 12 frames do not fit in 10
        #expect(tap.droppedFrames.load(ordering: .relaxed) == 6)
        #expect(tap.read { got += $0 } == 24)
        #expect(push(6, from: 50))              // wraps: 4 frames at the end, 2 at the start
        var runs = 0
        #expect(tap.read { got += $0; runs += 1 } == 24)
        #expect(runs == 2)
        #expect(got == (0..<24).map { UInt8($0) } + (0..<24).map { 50 + UInt8($0) })
        #expect(tap.read { _ in } == 0)
    }

    @Test func pushingNeverAllocates() {
        let tap = AudioTap(frameCapacity: 48_000, frameByteCount: 8)
        let period = [UInt8](repeating: 7, count: 64 * 8)
        period.withUnsafeBytes { bytes in
            bellkeys_allocations_start()
            for _ in 0..<2_000 { _ = tap.read { _ in }; tap.push(bytes.baseAddress!, frameCount: 64) }
            #expect(bellkeys_allocations_stop() == 0)
        }
    }
}
