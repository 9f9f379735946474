import AllocationCounter
import BellkeysAudio
import BellkeysEngine
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import EngineTestSupport
import Synchronization
import Testing

/// The AVX2 build of the four-voice loop (`EngineConfiguration.wideMixing`) against the loop
/// every x86-64 CPU runs: the same bytes, and no allocation. Runs where the CPU has AVX2 (the
/// build and CI machines do); elsewhere the wide loop is never chosen and there is nothing to run.
@Suite(.enabled(if: cpuRunsWideMixing(), "this CPU does not run x86-64-v3 code"))
struct WideMixing {
    /// The bundled bells and map (a table, the hall, velocity timbre), dense strikes on two
    /// channels with volume and pan moving, rendered by both loops in 64- and 1024-frame blocks.
    @Test(arguments: [64, 1_024])
    func theWideLoopGivesTheSameBytes(block: Int) throws {
        let loaded = try loadInstrument(path: samplesFolder + "/tags.json")
        func render(wide: Bool) -> [Float] {
            var configuration = EngineConfiguration(sampleRate: 48_000, polyphony: 512)
            configuration.maxBlockFrames = block
            configuration.wideMixing = wide
            var instrument = loaded.instrument
            instrument.regions = instrument.regions.map {
                var bell = $0
                bell.noteOff = .ring
                return bell
            }
            let engine = Engine(bank: loaded.bank, instrument: instrument, configuration: configuration)
            #expect(engine.wideMixing == wide)
            for i in 0..<600 {
                let frame = Int64(i * 997)
                engine.enqueue(
                    .noteOn(frame: frame, channel: i % 2, note: 60 + (i * 5) % 13, velocity: 20 + (i * 37) % 108))
                if i % 40 == 0 {
                    engine.enqueue(.control(frame: frame + 11, channel: i % 2, controller: 7, value: 60 + i % 67))
                }
                if i % 55 == 0 {
                    engine.enqueue(.control(frame: frame + 5, channel: 1, controller: 10, value: (i * 13) % 128))
                }
            }
            let frames = 48_000 * 14
            var out = [Float](repeating: 0, count: 2 * frames)
            let left = UnsafeMutablePointer<Float>.allocate(capacity: block),
                right = UnsafeMutablePointer<Float>.allocate(capacity: block)
            defer {
                left.deallocate()
                right.deallocate()
            }
            var done = 0
            while done < frames {
                engine.render(left: left, right: right, frameCount: block)
                for j in 0..<block where done + j < frames {
                    out[2 * (done + j)] = left[j]
                    out[2 * (done + j) + 1] = right[j]
                }
                done += block
            }
            #expect(engine.peakVoiceCount.load(ordering: .relaxed) > 100)
            return out
        }
        let portable = render(wide: false), wide = render(wide: true)
        #expect(portable.contains { $0 != 0 })
        let differing = zip(portable, wide).filter { $0.bitPattern != $1.bitPattern }.count
        #expect(differing == 0, "\(differing) samples differ between the two loops")
    }

    /// Thousands of blocks with the wide loop: the render thread allocates nothing.
    @Test func theWideLoopNeverAllocates() {
        let samples: [[Float]] = (0..<13).map { (k: Int) -> [Float] in
            (0..<9_600).map { (i: Int) -> Float in Float((i * (k + 3)) % 200 - 100) / 200 }
        }
        let keys: [KeySettings] = (0..<13).map { (k: Int) -> KeySettings in
            let side: Float = k % 3 == 1 ? 0.8 : 1, other: Float = k % 3 == 1 ? 0.3 : 1
            return KeySettings(
                note: 60 + k, sampleIndex: k, gain: 0.7, noteOff: .ring, leftGain: side, rightGain: other)
        }
        let e = makeEngine(samples: samples, keys: keys, polyphony: 64) { $0.wideMixing = true }
        #expect(e.wideMixing)
        let block = 64
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block),
            right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        var frame: Int64 = 0
        bellkeys_allocations_start()
        for b in 0..<3_000 {
            e.enqueue(.noteOn(frame: frame + Int64(b % block), note: 60 + (b * 7) % 13, velocity: 1 + b % 127))
            if b % 2 == 0 {
                e.render(into: left, frameCount: block)
            } else {
                e.render(left: left, right: right, frameCount: block)
            }
            frame += Int64(block)
        }
        #expect(bellkeys_allocations_stop() == 0)
        #expect(e.peakVoiceCount.load(ordering: .relaxed) > 32)
    }
}
