/// The decoded bell samples, stored once for all voices.
///
/// Frames are kept as `Int16` with one power-of-two scale per sample: a voice reads half the
/// bytes of `Float` storage (mixing many voices is bound by memory bandwidth), and because the
/// scale is a power of two, `Float(stored) * scale` reproduces the stored value exactly.
/// Each sample is quantised relative to its own peak, so quiet samples keep their resolution.
///
/// Thread: built on the control thread before the engine starts; read-only afterwards.
public final class SampleBank {
    /// Mono frames of every sample, back to back.
    let storage: UnsafeMutableBufferPointer<Int16>
    /// Per sample: first frame in `storage`, frame count, and the scale that turns a stored
    /// value back into a linear amplitude.
    public let offsets: [Int]
    public let frameCounts: [Int]
    public let scales: [Float]
    /// Frames per second of every sample in the bank.
    public let sampleRate: Int

    /// Quantises mono `Float` samples (nominal range -1...1) into the bank.
    /// - Precondition: every value is finite and every sample has at least one frame.
    public init(samples: [[Float]], sampleRate: Int) {
        precondition(sampleRate > 0)
        let total = samples.reduce(0) { $0 + $1.count }
        storage = .allocate(capacity: max(total, 1))
        storage.initialize(repeating: 0)
        var offsets: [Int] = [], counts: [Int] = [], scales: [Float] = []
        var offset = 0
        for sample in samples {
            precondition(!sample.isEmpty, "a sample needs at least one frame")
            var peak: Float = 0
            for x in sample {
                precondition(x.isFinite, "sample values must be finite")
                peak = max(peak, abs(x))
            }
            let scale = SampleBank.powerOfTwoScale(peak: peak)
            for (i, x) in sample.enumerated() {
                let q = (x / scale).rounded()
                storage[offset + i] = Int16(max(-32767, min(32767, q)))
            }
            offsets.append(offset)
            counts.append(sample.count)
            scales.append(scale)
            offset += sample.count
        }
        self.offsets = offsets
        self.frameCounts = counts
        self.scales = scales
        self.sampleRate = sampleRate
    }

    deinit { storage.deallocate() }

    /// Number of samples in the bank.
    public var count: Int { offsets.count }

    /// Bytes of sample memory (for reports).
    public var byteCount: Int { storage.count * MemoryLayout<Int16>.size }

    /// The whole storage, for locking it into memory.
    public var rawStorage: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(storage) }

    /// The smallest power of two `s` with `peak / s <= 32767`, so the peak uses 15 bits.
    static func powerOfTwoScale(peak: Float) -> Float {
        var scale: Float = 1.0 / 32768.0
        if peak == 0 { return scale }
        while peak / scale > 32767 { scale *= 2 }
        while scale > Float.leastNormalMagnitude, peak / (scale / 2) <= 32767 { scale /= 2 }
        return scale
    }

    /// Frame `index` of sample `sample` as a linear amplitude (control thread, tests).
    public func value(sample: Int, frame index: Int) -> Float {
        Float(storage[offsets[sample] + index]) * scales[sample]
    }
}
