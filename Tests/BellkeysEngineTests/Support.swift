import Synchronization
import BellkeysEngine
import Testing

/// Builds an engine at 48 kHz over synthetic samples, with CC7 raised to 127 on channel 0 so
/// that bus gain is exactly 1 unless a test says otherwise. The limiter threshold is raised to
/// 1.0 so that full-scale test samples pass untouched; limiter tests set the real default.
func makeEngine(samples: [[Float]], keys: [KeySettings], polyphony: Int = 16,
                curve: VelocityCurve = .square, unmapped: UnmappedNotes = .ignore,
                masterDecibels: Double = 0, unityVolume: Bool = true,
                configure: (inout EngineConfiguration) -> Void = { _ in }) -> Engine {
    let bank = SampleBank(samples: samples, sampleRate: 48_000)
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: polyphony)
    config.limiterThreshold = 1
    configure(&config)
    let engine = Engine(bank: bank,
                        instrument: Instrument(keys: keys, velocityCurve: curve,
                                               unmappedNotes: unmapped,
                                               masterVolumeDecibels: masterDecibels),
                        configuration: config)
    if unityVolume { engine.enqueue(.control(frame: 0, controller: 7, value: 127)) }
    return engine
}

/// Renders `frameCount` frames in one call and returns them.
func render(_ engine: Engine, _ frameCount: Int) -> [Float] {
    [Float](unsafeUninitializedCapacity: frameCount) { buffer, count in
        engine.render(into: buffer.baseAddress!, frameCount: frameCount)
        count = frameCount
    }
}

func constant(_ value: Float, _ count: Int) -> [Float] { [Float](repeating: value, count: count) }

func expectClose(_ a: Float, _ b: Float, tolerance: Float = 1e-6,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(abs(a - b) <= tolerance, "\(a) != \(b)", sourceLocation: sourceLocation)
}
