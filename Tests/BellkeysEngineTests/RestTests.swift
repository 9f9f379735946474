import BellkeysEngine
import BellkeysModel
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

/// The mixer's side of rest: its interleaved output (zeros written once while the engines rest)
/// and a JACK cycle's channel buffers, bit for bit what they are when every period is mixed.
@Suite struct QuietMixer {
    /// Periods of `frames` through a mixer whose engine skips rest or not, as the device sees
    /// them (interleaved bytes) and as JACK's ports do (one float buffer per channel, .f32 only).
    func periods(skipping: Bool, format: OutputSampleFormat, frames: Int) -> (bytes: [UInt8], ports: [Float]) {
        let bell = (0..<300).map { Float(0.8) * Float(1 - Double($0) / 300) * ($0 % 5 < 2 ? 1 : -1) }
        let engine = makeEngine(samples: [bell], keys: [KeySettings(note: 60, sampleIndex: 0)]) {
            $0.skipsRest = skipping
        }
        // Sound, silence, sound again, silence: each period mixed or rested in turn.
        for frame in [5, 1_000, 1_003, 3_000] { engine.enqueue(.noteOn(frame: Int64(frame), note: 60, velocity: 100)) }
        let mixer = LiveMixer(engine: engine, channels: 2, format: format, maximumPeriodFrames: 64)
        var bytes: [UInt8] = [], ports: [Float] = []
        let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer {
            left.deallocate()
            right.deallocate()
        }
        let buffers = [left, right]
        for k in 0..<(4_000 / frames) {
            if format == .f32, k % 2 == 1 {
                // Every other period as a JACK cycle (its parts of at most 64 frames).
                mixer.beginPeriod(frameCount: frames, nanoseconds: 1)
                buffers.withUnsafeBufferPointer { mixer.render(frameCount: frames, into: $0.baseAddress!, tap: nil) }
                for i in 0..<frames { ports += [left[i], right[i]] }
            } else {
                mixer.renderPeriod(frameCount: min(frames, 64), nanoseconds: 1)
                bytes += UnsafeRawBufferPointer(start: mixer.output, count: min(frames, 64) * mixer.frameByteCount)
            }
        }
        return (bytes, ports)
    }

    @Test(arguments: [OutputSampleFormat.s16, .s32, .f32], [64, 100])
    func theDeviceAndTheJACKPortsGetExactlyTheMixedBytes(format: OutputSampleFormat, frames: Int) {
        let mixed = periods(skipping: false, format: format, frames: frames)
        let skipped = periods(skipping: true, format: format, frames: frames)
        #expect(mixed.bytes.count == skipped.bytes.count && mixed.ports.count == skipped.ports.count)
        let byte = mixed.bytes.indices.first { mixed.bytes[$0] != skipped.bytes[$0] }
        let port = mixed.ports.indices.first { mixed.ports[$0].bitPattern != skipped.ports[$0].bitPattern }
        #expect(byte == nil && port == nil, "first difference: byte \(byte ?? -1), port sample \(port ?? -1)")
        // Not all silence: both strikes came out.
        #expect(skipped.bytes.contains { $0 != 0 })
    }
}
