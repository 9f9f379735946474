import BellkeysEngine
import EngineTestSupport
import Testing

/// Silence is not mixed: a segment with no voice, an empty room and the limiter at rest comes
/// out as zeros without a mix. These check that it is exactly what the mix would have given,
/// samples and every state after it, by rendering the same score with the skip turned off.
@Suite struct QuietWhenIdle {
    /// A score that goes quiet in every way the engine can: a bell rings out in the hall, the
    /// limiter recovers after a loud chord, CC7, CC10, CC91 and the master volume move while
    /// nothing sounds, then bells strike again into the settled gains.
    func render(skipping: Bool, block: Int, room: Bool) -> (left: [Float], right: [Float], rested: Int) {
        let bell = (0..<4_800).map { i in Float(0.9) * Float(1 - Double(i) / 4_800) * (i % 7 < 3 ? 1 : -1) }
        let engine = makeEngine(
            samples: [bell], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .ring)],
            reverb: room ? ReverbSettings(preset: .room, mix: 0.4) : .off
        ) {
            $0.limiterThreshold = 0.891
            $0.skipsRest = skipping
        }
        for (frame, velocity) in [(10, 40), (11, 40), (12, 40)] {
            engine.enqueue(.noteOn(frame: Int64(frame), note: 60, velocity: velocity))
        }
        // CC7 moves (over 64 frames) as the last bell ends at 4,812: with no room, the segments after
        // them are at rest while the gain is still moving, and the next strike finds it settled.
        engine.enqueue(.control(frame: 4_811, controller: 7, value: 80))
        engine.enqueue(.noteOn(frame: 6_000, note: 60, velocity: 90))
        // The room rings out within about 1.5 s; while it is quiet, the gains move.
        engine.enqueue(.control(frame: 90_000, controller: 7, value: 90))
        engine.enqueue(.control(frame: 90_100, controller: 10, value: 20))
        engine.enqueue(.control(frame: 90_200, controller: 91, value: 60))
        engine.enqueue(.noteOn(frame: 96_003, note: 60, velocity: 100))
        engine.enqueue(.noteOn(frame: 150_000, note: 60, velocity: 127))
        engine.enqueue(.noteOn(frame: 150_001, note: 60, velocity: 127))
        var left: [Float] = [], right: [Float] = [], rested = 0
        var l = [Float](repeating: 0, count: block), r = [Float](repeating: 0, count: block)
        while left.count < 240_000 {
            if left.count == 92_160 { engine.setMasterVolume(decibels: -6) }
            l.withUnsafeMutableBufferPointer { lb in
                r.withUnsafeMutableBufferPointer { rb in
                    engine.render(left: lb.baseAddress!, right: rb.baseAddress!, frameCount: block)
                }
            }
            if engine.renderedOnlySilence { rested += 1 }
            left += l
            right += r
        }
        return (left, right, rested)
    }

    @Test(arguments: [64, 100, 256], [false, true])
    func skippingTheMixOfSilenceChangesNoBit(block: Int, room: Bool) {
        let mixed = render(skipping: false, block: block, room: room)
        let skipped = render(skipping: true, block: block, room: room)
        #expect(mixed.rested == 0)
        // Most of the score is silence after the room has emptied.
        #expect(skipped.rested > 240_000 / block / 4)
        let left = mixed.left.indices.first { mixed.left[$0].bitPattern != skipped.left[$0].bitPattern }
        let right = mixed.right.indices.first { mixed.right[$0].bitPattern != skipped.right[$0].bitPattern }
        #expect(left == nil && right == nil, "first differing frame: left \(left ?? -1), right \(right ?? -1)")
        // The score is not silent where it should sound: each strike and its room.
        #expect(skipped.left[10..<4_000].contains { $0 != 0 })
        #expect(skipped.left[96_003..<97_000].contains { $0 != 0 })
        #expect(skipped.right[150_000..<151_000].contains { $0 != 0 })
    }

    @Test func theLimiterRecoveringIsNotRest() {
        // Three full-scale strikes at once: the limiter acts, then recovers over 0.25 s; the
        // skip waits for its gain to be exactly 1 again.
        let bell = [Float](repeating: 0.9, count: 64)
        let engine = makeEngine(samples: [bell], keys: [KeySettings(note: 60, sampleIndex: 0)]) {
            $0.limiterThreshold = 0.891
        }
        for _ in 0..<3 { engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) }
        var silentBlocks: [Int] = []
        var out = [Float](repeating: 0, count: 64)
        for k in 0..<400 {
            out.withUnsafeMutableBufferPointer { engine.render(into: $0.baseAddress!, frameCount: 64) }
            if engine.renderedOnlySilence { silentBlocks.append(k) }
        }
        #expect(engine.limitedFrames.load(ordering: .relaxed) > 0)
        // Recovery from 0.891 / 2.7 to 1 takes (1 - 0.33) × 12,000 frames = about 126 blocks.
        #expect(
            silentBlocks.first.map { $0 > 100 && $0 < 200 } == true, "first rest at block \(silentBlocks.first ?? -1)")
        #expect(silentBlocks.count == 400 - silentBlocks.first!)
    }
}
