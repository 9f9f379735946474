import BellkeysEngine
import BellkeysModel
import Synchronization
import Testing

@Suite struct VoiceMixing {
    @Test func oneVoiceAtKeyGainAndFullVelocity() {
        let e = makeEngine(samples: [constant(0.5, 100)], keys: [KeySettings(note: 60, sampleIndex: 0, gain: 0.25)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        let out = render(e, 128)
        #expect(out[0..<100].allSatisfy { $0 == 0.125 })
        #expect(out[100...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    @Test func noteStartsAtItsExactFrameInsideABlock() {
        var impulse = constant(0, 10)
        impulse[0] = 1
        let e = makeEngine(samples: [impulse], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 1_037, note: 60, velocity: 127))
        let out = render(e, 2_048)
        #expect(out.firstIndex { $0 != 0 } == 1_037)
        #expect(out[1_037] == 1)
        #expect(out.filter { $0 != 0 }.count == 1)
    }

    @Test func startFrameDoesNotDependOnRenderCallSizes() {
        var impulse = constant(0, 4)
        impulse[0] = 1
        for callFrames in [1, 7, 64, 100, 4_096] {
            let e = makeEngine(samples: [impulse], keys: [KeySettings(note: 60, sampleIndex: 0)])
            e.enqueue(.noteOn(frame: 3_001, note: 60, velocity: 127))
            var out: [Float] = []
            while out.count < 4_096 { out += render(e, callFrames) }
            #expect(out.firstIndex { $0 != 0 } == 3_001, "render calls of \(callFrames) frames")
        }
    }

    @Test func severalNotesInsideOneBlockWithAControllerBetween() {
        let e = makeEngine(samples: [constant(0.25, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0)]) {
            $0.maxBlockFrames = 1_024
        }
        e.enqueue(.noteOn(frame: 5, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 300, note: 60, velocity: 127))
        e.enqueue(.control(frame: 400, controller: 11, value: 0))
        e.enqueue(.noteOn(frame: 700, note: 60, velocity: 127))
        let out = render(e, 1_024)
        #expect(out[0..<5].allSatisfy { $0 == 0 })
        #expect(out[5..<300].allSatisfy { $0 == 0.25 })
        #expect(out[300..<400].allSatisfy { $0 == 0.5 })
        for k in 0..<64 { expectClose(out[400 + k], 0.5 * (1 - Float(k) / 64)) }
        #expect(out[464...].allSatisfy { $0 == 0 })
    }

    @Test func noteOffAtTheFrameItsNoteStartsDampsFromThere() {
        let e = makeEngine(
            samples: [constant(1, 1_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .damp(releaseSeconds: 0.001))]
        ) {
            $0.maxBlockFrames = 1_024
        }
        e.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 100, note: 60))
        let out = render(e, 1_024)
        #expect(out[0..<100].allSatisfy { $0 == 0 })
        for k in 0..<48 { expectClose(out[100 + k], 1 - Float(k) / 48) }
        #expect(out[148...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    @Test func twoVoicesSum() {
        let e = makeEngine(
            samples: [constant(0.25, 50), constant(-0.125, 50)],
            keys: [KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 62, sampleIndex: 1)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 10, note: 62, velocity: 127))
        let out = render(e, 64)
        #expect(out[0..<10].allSatisfy { $0 == 0.25 })
        #expect(out[10..<50].allSatisfy { $0 == 0.125 })
        #expect(out[50..<60].allSatisfy { $0 == -0.125 })
        #expect(out[60...].allSatisfy { $0 == 0 })
    }

    @Test func sameKeyStruckAgainOverlaps() {
        let e = makeEngine(samples: [constant(0.25, 100)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 20, note: 60, velocity: 127))
        let out = render(e, 140)
        #expect(out[0..<20].allSatisfy { $0 == 0.25 })
        #expect(out[20..<100].allSatisfy { $0 == 0.5 })
        #expect(out[100..<120].allSatisfy { $0 == 0.25 })
    }

    @Test func velocityCurves() {
        #expect(VelocityCurve.square.gain(velocity: 127) == 1)
        expectClose(VelocityCurve.square.gain(velocity: 64), (64.0 / 127) * (64.0 / 127))
        expectClose(VelocityCurve.linear.gain(velocity: 64), 64.0 / 127)
        #expect(VelocityCurve.fixed.gain(velocity: 1) == 1)
        let e = makeEngine(samples: [constant(1, 10)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 64))
        expectClose(render(e, 10)[5], VelocityCurve.square.gain(velocity: 64))
    }

    @Test func velocityZeroNoteOnIsANoteOff() {
        let e = makeEngine(
            samples: [constant(1, 1_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .damp(releaseSeconds: 0.001))])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 60, velocity: 0))
        let out = render(e, 300)
        #expect(out[148...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    @Test func unmappedNotesAreIgnoredAndCounted() {
        let e = makeEngine(samples: [constant(1, 10)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        e.enqueue(.noteOn(frame: 0, note: 48, velocity: 127))
        #expect(render(e, 64).allSatisfy { $0 == 0 })
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 1)
    }

    @Test func foldPlaysUnmappedNotesOctavesAway() {
        let keys = [KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 72, sampleIndex: 1)]
        let table = Instrument(keys: keys, unmappedNotes: .fold).soundingNoteForEveryNote()
        #expect(table[48] == 60) // C3 -> C4
        #expect(table[84] == 72) // C6 -> C5 (72 is mapped)
        #expect(table[61] == nil) // C#4 folds onto itself: unmapped
        #expect(table[60] == 60 && table[72] == 72)
        #expect(Instrument(keys: keys).soundingNoteForEveryNote()[48] == nil)
        let e = makeEngine(
            samples: [constant(0.5, 10), constant(0.25, 10)],
            keys: keys, unmapped: .fold)
        e.enqueue(.noteOn(frame: 0, note: 36, velocity: 127))
        #expect(render(e, 10)[0] == 0.5)
    }

    @Test func sampleBankReproducesPowerOfTwoValuesExactly() {
        let bank = SampleBank(samples: [[1, -1, 0.5, 0.25, 0], [0.001, -0.0005]], sampleRate: 48_000)
        #expect((0..<5).map { bank.value(sample: 0, frame: $0) } == [1, -1, 0.5, 0.25, 0])
        #expect(bank.scales[1] * 32767 >= 0.001 && bank.scales[1] * 16384 < 0.001)
        expectClose(bank.value(sample: 1, frame: 0), 0.001, tolerance: 0.001 / 32768)
    }
}
