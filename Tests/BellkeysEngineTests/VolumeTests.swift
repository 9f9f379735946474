import BellkeysEngine
import BellkeysModel
import Synchronization
import Testing

@Suite struct Volume {
    @Test func channelVolumeRampsAcrossExactlyOneBlock() {
        let e = makeEngine(samples: [constant(1, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.control(frame: 100, controller: 7, value: 0))
        let out = render(e, 300)
        #expect(out[0..<100].allSatisfy { $0 == 1 })
        for k in 0..<64 { expectClose(out[100 + k], 1 - Float(k) / 64) }
        #expect(out[164...].allSatisfy { $0 == 0 })
    }

    @Test func volumeAndExpressionFollowTheGeneralMIDICurve() {
        let e = makeEngine(samples: [constant(1, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.control(frame: 0, controller: 7, value: 100))
        e.enqueue(.control(frame: 0, controller: 11, value: 64))
        let out = render(e, 200)
        let expected = (100.0 / 127) * (100.0 / 127) * (64.0 / 127) * (64.0 / 127)
        expectClose(out[150], Float(expected))
    }

    @Test func defaultChannelVolumeIs100() {
        let e = makeEngine(
            samples: [constant(1, 100)], keys: [KeySettings(note: 60, sampleIndex: 0)], unityVolume: false)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        expectClose(render(e, 10)[0], Float((100.0 / 127) * (100.0 / 127)))
    }

    @Test func masterVolumeFromTheMapAndLiveChangesRamp() {
        let e = makeEngine(
            samples: [constant(1, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0)],
            masterDecibels: -6.020_599_913)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        expectClose(render(e, 64)[10], 0.5)
        e.setMasterVolume(decibels: 0)
        let out = render(e, 128)
        for k in 0..<64 { expectClose(out[k], 0.5 + 0.5 * Float(k) / 64, tolerance: 1e-5) }
        #expect(out[64...].allSatisfy { abs($0 - 1) < 1e-6 })
    }

    @Test func limiterIsTransparentBelowItsThreshold() {
        let e = makeEngine(samples: [constant(0.875, 500)], keys: [KeySettings(note: 60, sampleIndex: 0)]) {
            $0.limiterThreshold = EngineConfiguration(sampleRate: 48_000).limiterThreshold
        }
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        #expect(render(e, 500).allSatisfy { $0 == 0.875 })
        #expect(e.limitedFrames.load(ordering: .relaxed) == 0)
    }

    @Test func thirteenFullBellsTogetherNeverPassTheThreshold() {
        // 13 keys of an alternating +-0.9 square wave struck at once: an unlimited sum of 11.7.
        let square = (0..<4_800).map { $0 % 48 < 24 ? Float(0.9) : -0.9 }
        let keys = (0..<13).map { KeySettings(note: 60 + $0, sampleIndex: 0) }
        let e = makeEngine(samples: [square], keys: keys) {
            $0.limiterThreshold = EngineConfiguration(sampleRate: 48_000).limiterThreshold
        }
        for note in 60...72 { e.enqueue(.noteOn(frame: 0, note: note, velocity: 127)) }
        let out = render(e, 4_800)
        let peak = out.map(abs).max()!
        #expect(peak <= 0.891)
        #expect(peak > 0.89)
        #expect(e.clippedSamples.load(ordering: .relaxed) == 0)
        #expect(e.limitedFrames.load(ordering: .relaxed) > 0)
        // The limiter gain never moves by a step: with a constant-magnitude input the output
        // magnitude only ever rises slowly (recovery) or is held at the threshold.
        for i in 1..<out.count { #expect(abs(out[i]) - abs(out[i - 1]) < 2e-3) }
    }
}
