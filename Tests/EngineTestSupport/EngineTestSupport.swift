import BellkeysEngine
import BellkeysModel
import Glibc

// Engines over synthetic samples, shared by the engine's and the control side's tests.

/// Builds an engine at 48 kHz over synthetic samples, with CC7 raised to 127 on channel 0 so
/// that bus gain is exactly 1 unless a test says otherwise. The limiter threshold is raised to
/// 1.0 so that full-scale test samples pass untouched; limiter tests set the real default.
public func makeEngine(
    samples: [[Float]], keys: [KeySettings], polyphony: Int = 16,
    curve: VelocityCurve = .square, unmapped: UnmappedNotes = .ignore,
    masterDecibels: Double = 0, unityVolume: Bool = true, reverb: ReverbSettings = .off, velocityTimbre: Double = 0,
    followsPanController: Bool = true,
    configure: (inout EngineConfiguration) -> Void = { _ in }
) -> Engine {
    let bank = SampleBank(samples: samples, sampleRate: 48_000)
    var config = EngineConfiguration(sampleRate: 48_000, polyphony: polyphony)
    config.limiterThreshold = 1
    configure(&config)
    var instrument = Instrument(
        keys: keys, velocityCurve: curve, unmappedNotes: unmapped,
        masterVolumeDecibels: masterDecibels, reverb: reverb)
    instrument.velocityTimbre = velocityTimbre
    instrument.followsPanController = followsPanController
    let engine = Engine(bank: bank, instrument: instrument, configuration: config)
    if unityVolume { engine.enqueue(.control(frame: 0, controller: 7, value: 127)) }
    return engine
}

/// Renders `frameCount` stereo frames, in one call or in calls of `block` frames, and returns
/// the left and the right channel.
public func renderStereo(_ engine: Engine, _ frameCount: Int, block: Int? = nil) -> (left: [Float], right: [Float]) {
    var left = [Float](repeating: 0, count: frameCount), right = [Float](repeating: 0, count: frameCount)
    left.withUnsafeMutableBufferPointer { l in
        right.withUnsafeMutableBufferPointer { r in
            var done = 0
            while done < frameCount {
                let n = min(block ?? frameCount, frameCount - done)
                engine.render(left: l.baseAddress! + done, right: r.baseAddress! + done, frameCount: n)
                done += n
            }
        }
    }
    return (left, right)
}

/// Renders `frameCount` frames in one call and returns them.
public func render(_ engine: Engine, _ frameCount: Int) -> [Float] {
    [Float](unsafeUninitializedCapacity: frameCount) { buffer, count in
        engine.render(into: buffer.baseAddress!, frameCount: frameCount)
        count = frameCount
    }
}

public func constant(_ value: Float, _ count: Int) -> [Float] { [Float](repeating: value, count: count) }

/// Sample for note `n`: an impulse at index n - 60, so an output frame tells which note
/// started where (frame of the strike + n - 60).
public func impulseKeys(ring: Bool = true) -> (samples: [[Float]], keys: [KeySettings]) {
    let samples = (0..<13).map { i in (0..<16).map { $0 == i ? Float(1) : 0 } }
    let keys = (0..<13).map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: ring ? .ring : release48) }
    return (samples, keys)
}

/// 1 ms at 48 kHz.
public let release48 = NoteOffMode.damp(releaseSeconds: 0.001)

// Pitch and level of rendered sines (regions, instruments).

/// A sine of `cycles` whole cycles over `frames` frames at `level`: it loops without a seam.
public func loopedSine(cycles: Int, frames: Int, level: Float = 0.5) -> [Float] {
    (0..<frames).map { Float(sin(2 * Double.pi * Double(cycles) * Double($0) / Double(frames))) * level }
}

/// The frequency of `x` over `range`, from its first and last rising zero crossings (each
/// placed between frames by linear interpolation), at 48 kHz.
public func measuredFrequency(_ x: [Float], _ range: Range<Int>) -> Double {
    var crossings: [Double] = []
    for i in range.dropLast() where x[i] < 0 && x[i + 1] >= 0 {
        crossings.append(Double(i) + Double(-x[i] / (x[i + 1] - x[i])))
    }
    return Double(crossings.count - 1) / (crossings.last! - crossings.first!) * 48_000
}

public func cents(_ f: Double, _ reference: Double) -> Double {
    1200 * log2(f / reference)
}

public func power(_ x: [Float]) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count) }

/// In-place radix-2 FFT (`re.count` a power of two).
public func fourierTransform(_ re: inout [Double], _ im: inout [Double]) {
    let n = re.count
    var j = 0
    for i in 1..<n {
        var bit = n >> 1
        while j & bit != 0 {
            j ^= bit
            bit >>= 1
        }
        j |= bit
        if i < j {
            re.swapAt(i, j)
            im.swapAt(i, j)
        }
    }
    var length = 2
    while length <= n {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: n, by: length) {
            for k in 0..<(length / 2) {
                let (c, s) = (cos(angle * Double(k)), sin(angle * Double(k)))
                let a = start + k, b = a + length / 2
                let tr = re[b] * c - im[b] * s, ti = re[b] * s + im[b] * c
                re[b] = re[a] - tr
                im[b] = im[a] - ti
                re[a] += tr
                im[a] += ti
            }
        }
        length <<= 1
    }
}

extension EngineEvent {
    /// The same event from a MIDI input (`transposable`), as `EngineEvent(midi:)` makes one.
    public var fromMIDIInput: EngineEvent {
        var event = self
        event.transposable = true
        return event
    }
}
