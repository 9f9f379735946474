import AllocationCounter
import BellkeysAudio
import BellkeysControl
import BellkeysEngine
import BellkeysModel
import Foundation
import Testing

/// The PCM path outside the VM: alsa-lib's `null` device and its `file` plugin.
@Suite struct SoundDevice {
    func engine(_ sample: [Float]) -> Engine {
        let bank = SampleBank(samples: [sample], sampleRate: 48_000)
        let engine = Engine(
            bank: bank, instrument: Instrument(keys: [KeySettings(note: 60, sampleIndex: 0)]),
            configuration: EngineConfiguration(sampleRate: 48_000))
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        return engine
    }

    @Test func theNullDeviceGrantsWhatIsAsked() throws {
        let pcm = try PCMOutput(device: "null", sampleRate: 48_000, channels: 2, periodFrames: 64, periods: 2)
        #expect(
            pcm.configuration
                == OutputConfiguration(
                    device: "null", sampleRate: 48_000, channels: 2, format: .s32,
                    periodFrames: 64, bufferFrames: 128))
        #expect(abs(pcm.configuration.bufferMilliseconds - 2.6667) < 0.001)
    }

    @Test func theDeviceReceivesExactlyTheRenderedFrames() throws {
        let path = temporaryFolder() + "/out.raw"
        // Multiples of 1/256: stored exactly by the bank's 16-bit quantisation.
        let sample: [Float] = (0..<300).map { Float($0 % 200 - 100) / 256 }
        let e = engine(sample)
        do {
            let pcm = try PCMOutput(
                device: "file:FILE=\(path),FORMAT=raw", sampleRate: 48_000, channels: 2,
                periodFrames: 64, periods: 2)
            let mixer = LiveMixer(engine: e, channels: 2, format: pcm.configuration.format, maximumPeriodFrames: 64)
            let thread = RenderThread(mixer: mixer, output: pcm)
            e.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
            for _ in 0..<8 { #expect(thread.cycle() == .written) }
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let values = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(values.count == 8 * 64 * 2)
        for frame in 0..<512 {
            let x: Float = (100..<400).contains(frame) ? sample[frame - 100] : 0
            let expected = pcm32(x, bits: 32)
            #expect(
                values[frame * 2] == expected && values[frame * 2 + 1] == expected,
                "frame \(frame): \(values[frame * 2]) \(values[frame * 2 + 1]) != \(expected); \(values[0..<8])")
            if values[frame * 2] != expected { break }
        }
    }

    @Test func renderThreadCyclesNeverAllocate() throws {
        let pcm = try PCMOutput(device: "null", sampleRate: 48_000, channels: 2, periodFrames: 64, periods: 2)
        let e = engine((0..<4_800).map { Float($0 % 100) / 200 })
        // With --record's tap (its writing thread not started: the tap only fills) and
        // scheduled events (the loop, the demo) beside the live ones.
        let path = NSTemporaryDirectory() + "bellkeys-cycle-\(getpid()).wav"
        let recorder = try Recorder(path: path, sampleRate: 48_000, channels: 2, format: .s32)
        defer {
            _ = recorder.finish()
            unlink(path)
        }
        let thread = RenderThread(
            mixer: LiveMixer(engine: e, channels: 2, format: .s32, maximumPeriodFrames: 64), output: pcm,
            tap: recorder.tap)
        _ = thread.cycle() // alsa-lib's first write sets up its own state
        bellkeys_allocations_start()
        for p in 0..<3_000 {
            e.enqueue(.noteOn(frame: Int64(p * 64 + p % 64), note: 60, velocity: 100))
            if p % 4 == 0 { _ = e.schedule(.noteOn(frame: Int64(p * 64 + 300), channel: 15, note: 60, velocity: 90)) }
            if p == 2_000 { e.cancelScheduled(channel: 15) }
            _ = thread.cycle()
        }
        let allocations = bellkeys_allocations_stop()
        #expect(allocations == 0)
        var recorded = 0
        recorder.tap.read { recorded += $0.count }
        #expect(recorded == 3_001 * 64 * 8)
    }

    @Test func theRenderThreadRunsUntilStopped() throws {
        let pcm = try PCMOutput(device: "null", sampleRate: 48_000, channels: 2, periodFrames: 64, periods: 2)
        let thread = RenderThread(
            mixer: LiveMixer(engine: engine([0.5]), channels: 2, format: .s32, maximumPeriodFrames: 64),
            output: pcm)
        _ = thread.start(priority: 10)
        usleep(50_000)
        thread.stop()
        let written = thread.periodsWritten.load(ordering: .relaxed)
        #expect(written > 0)
        usleep(20_000)
        #expect(thread.periodsWritten.load(ordering: .relaxed) == written)
        #expect(!thread.failed)
    }

    @Test func aMissingDeviceSaysWhatToDo() {
        #expect {
            _ = try PCMOutput(device: "hw:7,0", sampleRate: 48_000, channels: 2, periodFrames: 64, periods: 2)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("hw:7,0: cannot open the sound device: ") && text.contains("bellkeys list")
                && text.contains("bellkeys render")
        }
    }
}
