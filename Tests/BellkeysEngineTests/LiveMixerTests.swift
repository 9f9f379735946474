import AllocationCounter
import BellkeysEngine
import BellkeysModel
import Testing

/// The render thread's period: the engine's mix in the device's format, and map reloads.
@Suite struct LiveMixing {
    func ramp(_ count: Int, scale: Float = 0.5) -> [Float] { (0..<count).map { Float($0 % 100) / 100 * scale } }

    @Test func aPeriodIsTheEngineMixInterleavedAsInt16() {
        let engine = makeEngine(
            samples: [[0.5, -0.25, 1, -1, 0.000_015]], keys: [KeySettings(note: 60, sampleIndex: 0)])
        let mixer = LiveMixer(engine: engine, channels: 2, format: .s16, maximumPeriodFrames: 8)
        engine.enqueue(.noteOn(frame: 2, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 8, nanoseconds: 1)
        let out = mixer.output.assumingMemoryBound(to: Int16.self)
        // 0.5 × 32767 = 16383.5 rounds to even; 0.000015 × 32767 = 0.49 rounds to 0.
        #expect(
            (0..<16).map { out[$0] } == [
                0, 0, 0, 0, 16384, 16384, -8192, -8192, 32767, 32767, -32767, -32767, 0, 0, 0, 0,
            ])
        #expect(mixer.frame == 8)
        #expect(mixer.clock.read()! == (0, 1))
        #expect(mixer.frameByteCount == 4)
    }

    @Test(arguments: [OutputSampleFormat.s32, .s24, .f32])
    func wideFormatsCarryTheMixExactly(format: OutputSampleFormat) {
        let engine = makeEngine(samples: [[0.5, -0.25]], keys: [KeySettings(note: 60, sampleIndex: 0)])
        let mixer = LiveMixer(engine: engine, channels: 1, format: format, maximumPeriodFrames: 4)
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 2, nanoseconds: 1)
        switch format {
        case .f32:
            let out = mixer.output.assumingMemoryBound(to: Float.self)
            #expect([out[0], out[1]] == [0.5, -0.25])
        default:
            // Rounded to nearest, half to even: 0.5 × (2³¹ − 1) → 2³⁰, −0.25 × (2³¹ − 1) → −2²⁹; at 24 bits
            // 0.5 × (2²³ − 1) → 2²², −0.25 × (2²³ − 1) → −2²¹, shifted to the top: the same words.
            let out = mixer.output.assumingMemoryBound(to: Int32.self)
            #expect([out[0], out[1]] == [1 << 30, -(1 << 29)])
        }
    }

    @Test(arguments: [OutputSampleFormat.f32, .s16])
    func aStereoDeviceGetsLeftAndRightAndTheMixOnItsOtherChannels(format: OutputSampleFormat) {
        let engine = makeEngine(
            samples: [[0.5, -0.25]], keys: [KeySettings(note: 60, sampleIndex: 0, leftGain: 1, rightGain: 0.5)])
        let mixer = LiveMixer(engine: engine, channels: 4, format: format, maximumPeriodFrames: 4)
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 2, nanoseconds: 1)
        // Frame 0: left 0.5, right 0.25, channels 3 and 4 their average; frame 1: × −0.5.
        let expected: [Float] = [0.5, 0.25, 0.375, 0.375, -0.25, -0.125, -0.1875, -0.1875]
        if format == .f32 {
            let out = mixer.output.assumingMemoryBound(to: Float.self)
            #expect((0..<8).map { out[$0] } == expected)
        } else {
            let out = mixer.output.assumingMemoryBound(to: Int16.self)
            #expect((0..<8).map { out[$0] } == expected.map { pcm16($0) })
            #expect(out[0] == 16384 && out[1] == 8192 && out[2] == 12288)
        }
    }

    @Test func onAStereoDeviceTheOldMapRingsOutOnBothSides() {
        let old = makeEngine(
            samples: [constant(0.25, 100)], keys: [KeySettings(note: 60, sampleIndex: 0, leftGain: 1, rightGain: 0.5)])
        let new = makeEngine(samples: [constant(0.5, 100)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        let mixer = LiveMixer(engine: old, channels: 2, format: .f32, maximumPeriodFrames: 64)
        let out = mixer.output.assumingMemoryBound(to: Float.self)
        old.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 64, nanoseconds: 1)
        #expect(mixer.install(new))
        new.enqueue(.noteOn(frame: 64 + 10, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 64, nanoseconds: 2)
        // The old bell (0.25 left, 0.125 right) alone, then with the new centred one (0.5 each).
        #expect(out[0] == 0.25 && out[1] == 0.125)
        #expect(out[20] == 0.75 && out[21] == 0.625)
    }

    @Test func aReloadedMapTakesOverWhileTheOldBellsRingOut() {
        let old = makeEngine(samples: [constant(0.25, 100)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        let new = makeEngine(samples: [constant(0.5, 100)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        let mixer = LiveMixer(engine: old, channels: 1, format: .f32, maximumPeriodFrames: 64)
        let out = mixer.output.assumingMemoryBound(to: Float.self)
        old.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 64, nanoseconds: 1)
        #expect(mixer.install(new))
        #expect(!mixer.install(new)) // one hand-over at a time
        new.enqueue(.noteOn(frame: 64 + 10, note: 60, velocity: 127))
        mixer.renderPeriod(frameCount: 64, nanoseconds: 2)
        #expect(new.currentFrame == 128) // started at the mixer's frame
        // Old bell (frames 64...99 of its 100) plus the new one from frame 10 of the period.
        #expect(out[0] == 0.25 && out[9] == 0.25 && out[10] == 0.75 && out[35] == 0.75 && out[36] == 0.5)
        #expect(mixer.takeRetired() === old) // silent after this period: handed back
        mixer.renderPeriod(frameCount: 64, nanoseconds: 3)
        // The new bell started at frame 74 and has 100 frames: it ends at 174, offset 46 here.
        #expect(out[0] == 0.5 && out[45] == 0.5 && out[46] == 0)
        #expect(mixer.takeRetired() == nil)
    }

    @Test func periodsNeverAllocateEvenAcrossAReload() {
        let keys = [KeySettings(note: 60, sampleIndex: 0, noteOff: .damp(releaseSeconds: 0.01))]
        let first = makeEngine(samples: [ramp(4_800)], keys: keys)
        let second = makeEngine(samples: [ramp(4_800)], keys: keys)
        let mixer = LiveMixer(engine: first, channels: 2, format: .s32, maximumPeriodFrames: 256)
        var installed = false
        var allocations = 0
        bellkeys_allocations_start()
        for p in 0..<2_000 {
            let frame = Int64(p * 256)
            let engine = installed ? second : first
            engine.enqueue(.noteOn(frame: frame + Int64(p % 200), note: 60, velocity: 1 + p % 127))
            if p % 3 == 0 { engine.enqueue(.noteOff(frame: frame + 100, note: 60)) }
            if p == 1_000 {
                // The hand-over itself is the control thread's (it records the engine): not counted.
                allocations += bellkeys_allocations_stop()
                installed = mixer.install(second)
                bellkeys_allocations_start()
            }
            mixer.renderPeriod(frameCount: 256, nanoseconds: UInt64(p) * 5_333_333)
        }
        allocations += bellkeys_allocations_stop()
        #expect(allocations == 0)
        #expect(installed && second.currentFrame == 2_000 * 256)
    }
}
