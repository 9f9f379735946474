import BellkeysEngine
import BellkeysModel
import Testing

/// The engine renders a left and a right channel. Keys are centred unless their gains say
/// otherwise (here a test sets the gains; the map's pan makes them through panGains).
@Suite struct Stereo {
    @Test func aPannedBellHasItsOwnGainOnEachSideAndTheMonoMixIsTheirAverage() {
        let keys = [
            KeySettings(note: 60, sampleIndex: 0, leftGain: 0.5, rightGain: 0.25),
            KeySettings(note: 61, sampleIndex: 1),
        ]
        let stereo = makeEngine(samples: [constant(0.5, 100), constant(0.25, 100)], keys: keys)
        let mono = makeEngine(samples: [constant(0.5, 100), constant(0.25, 100)], keys: keys)
        for e in [stereo, mono] {
            e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
            e.enqueue(.noteOn(frame: 10, note: 61, velocity: 127))
        }
        let (left, right) = renderStereo(stereo, 128)
        let out = render(mono, 128)
        // Left: 0.5 × 0.5, then + 0.25 from frame 10; right: 0.5 × 0.25, then + 0.25.
        expectClose(left[0], 0.25)
        expectClose(left[10], 0.5)
        expectClose(left[99], 0.5)
        expectClose(right[0], 0.125)
        expectClose(right[10], 0.375)
        expectClose(right[99], 0.375)
        expectClose(left[109], 0.25)
        expectClose(right[109], 0.25) // the centred bell alone
        #expect(left[110] == 0 && right[110] == 0)
        for j in 0..<128 { expectClose(out[j], (left[j] + right[j]) / 2) }
    }

    @Test func withNoBellPannedBothSidesAreExactlyTheMonoMix() {
        var samples: [[Float]] = []
        for k in 0..<3 {
            let wave: [Float] = (0..<3_000).map { i in Float((i * (k + 2)) % 90 - 45) / 100 }
            samples.append(wave)
        }
        let keys = (0..<3).map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: .damp(releaseSeconds: 0.01)) }
        let a = makeEngine(samples: samples, keys: keys), b = makeEngine(samples: samples, keys: keys)
        for e in [a, b] {
            for k in 0..<12 {
                let event = EngineEvent.noteOn(frame: Int64(k * 211), note: 60 + k % 3, velocity: 40 + 7 * k)
                e.enqueue(event)
            }
            e.enqueue(EngineEvent.control(frame: 700, controller: 7, value: 90))
            e.enqueue(EngineEvent.noteOff(frame: 1_500, note: 61))
        }
        let (left, right) = renderStereo(a, 4_000)
        let out = render(b, 4_000)
        let leftBits: [UInt32] = left.map { $0.bitPattern }, rightBits: [UInt32] = right.map { $0.bitPattern }
        let monoBits: [UInt32] = out.map { $0.bitPattern }
        #expect(left.contains { $0 != 0 })
        #expect(leftBits == monoBits)
        #expect(rightBits == monoBits)
    }

    @Test func theLimiterIsLinkedSoItNeverMovesABell() {
        let keys = [KeySettings(note: 60, sampleIndex: 0, leftGain: 2, rightGain: 0.5)]
        let e = makeEngine(samples: [constant(1, 100)], keys: keys) { $0.limiterThreshold = 0.891 }
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let (left, right) = renderStereo(e, 64)
        // The left (2.0) sets the gain: it lands on the threshold, the right keeps a quarter of it.
        #expect(left[0] == 0.891)
        expectClose(right[0], 0.891 / 4)
        for j in 0..<64 { expectClose(right[j] / left[j], 0.25, tolerance: 1e-5) }
        #expect(e.limitedFrames.load(ordering: .relaxed) == 64 && e.clippedSamples.load(ordering: .relaxed) == 0)
    }

    @Test func aChannelOfPannedBellsFollowsItsVolumeRamp() {
        let keys = [KeySettings(note: 60, sampleIndex: 0, leftGain: 0.5, rightGain: 0.25)]
        let e = makeEngine(samples: [constant(1, 1_000)], keys: keys)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.control(frame: 100, controller: 7, value: 0)) // to silence over 64 frames
        let (left, right) = renderStereo(e, 300)
        expectClose(left[99], 0.5)
        expectClose(right[99], 0.25)
        // Halfway down the ramp (CC7 127 → 0 over frames 100...163): half the gain.
        expectClose(left[132], 0.25, tolerance: 1e-5)
        expectClose(right[132], 0.125, tolerance: 1e-5)
        #expect(left[164...].allSatisfy { $0 == 0 } && right[164...].allSatisfy { $0 == 0 })
    }

    @Test func aPannedBellIsStolenWithTheShortFade() {
        let keys = [
            KeySettings(note: 60, sampleIndex: 0, leftGain: 1, rightGain: 0), KeySettings(note: 61, sampleIndex: 1),
        ]
        let e = makeEngine(samples: [constant(0.5, 10_000), constant(0.25, 10_000)], keys: keys, polyphony: 1)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 61, velocity: 127)) // polyphony 1: C4 is stolen
        let (left, right) = renderStereo(e, 600)
        // The stolen bell fades over 5 ms (240 frames) from 100; the new one is centred.
        expectClose(left[99], 0.5)
        #expect(right[99] == 0)
        expectClose(left[100], 0.5 + 0.25)
        expectClose(right[100], 0.25)
        expectClose(left[339], 0.25 + 0.5 / 240, tolerance: 1e-5)
        expectClose(left[340], 0.25)
        expectClose(right[340], 0.25)
        #expect(e.stolenVoices.load(ordering: .relaxed) == 1)
    }

    @Test(arguments: OutputSampleFormat.allCases)
    func equalSidesConvertExactlyAsTheMonoMixDoes(format: OutputSampleFormat) {
        let x: [Float] = (0..<64).map { Float($0 - 32) / 31 + 0.000_013 * Float($0) }
        var stereo = [UInt8](repeating: 0, count: 64 * 8 * 4), mono = stereo
        stereo.withUnsafeMutableBytes {
            interleave(left: x, right: x, frameCount: 64, channels: 8, format: format, into: $0.baseAddress!)
        }
        mono.withUnsafeMutableBytes {
            interleave(x, frameCount: 64, channels: 8, format: format, into: $0.baseAddress!)
        }
        #expect(stereo == mono)
        #expect(mono.contains { $0 != 0 })
    }

    @Test func aPannedBellStartsAtItsFrameAndIsDamped() {
        let keys = [KeySettings(note: 60, sampleIndex: 0, noteOff: release48, leftGain: 1, rightGain: 0)]
        let e = makeEngine(samples: [constant(1, 10_000)], keys: keys, polyphony: 1)
        e.enqueue(.noteOn(frame: 30, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 200, note: 60))
        let (left, right) = renderStereo(e, 400)
        #expect(left[29] == 0 && left[30] != 0 && right.allSatisfy { $0 == 0 })
        // Released over 48 frames from 200: silent from 248, and its slot is free again.
        #expect(left[247] != 0 && left[248...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }
}
