/// Frames of zeros before and after every sample in the bank, so a kernel's taps never leave
/// its memory: half the widest kernel (BellkeysEngine's `InterpolationKernels.maximumTaps`;
/// `Engine.init` checks that they agree).
package let samplePadding = 128

/// A sample's frames as a bank keeps them (16-bit values meaning `value × scale`, `channels`
/// interleaved, inside their padding), made outside any bank: on any thread, before a bank
/// takes its memory (`SampleBank.adopt`). Freed with it if no bank takes it. Thread: made on
/// any thread, adopted on one.
public final class PreparedSample: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Int16>
    let channels: Int
    let scale: Float
    var isAdopted = false

    /// Frames that `fill` writes (every value: the memory is not cleared first, only the padding
    /// around it). If `fill` throws, nothing is kept.
    public init<E: Error>(
        frameCount: Int, channels: Int = 1, scale: Float, fill: (UnsafeMutableBufferPointer<Int16>) throws(E) -> Void
    ) throws(E) {
        precondition(frameCount > 0, "a sample needs at least one frame")
        precondition(channels == 1 || channels == 2, "a sample is mono or stereo")
        let padding = samplePadding * channels
        let whole = UnsafeMutablePointer<Int16>.allocate(capacity: frameCount * channels + 2 * padding)
        whole.initialize(repeating: 0, count: padding)
        (whole + padding + frameCount * channels).initialize(repeating: 0, count: padding)
        let buffer = UnsafeMutableBufferPointer(start: whole + padding, count: frameCount * channels)
        do {
            try fill(buffer)
        } catch {
            // (Thrown before every property is set: the deinit does not run.)
            whole.deallocate()
            throw error
        }
        (self.buffer, self.channels, self.scale) = (buffer, channels, scale)
    }

    /// `frames` (`channels` interleaved, nominally -1...1) quantised to 16 bits below their peak
    /// (a power-of-two scale: `SampleBank`).
    /// - Precondition: at least one frame, every value finite.
    public convenience init(interleaved frames: [Float], channels: Int) {
        precondition(!frames.isEmpty, "a sample needs at least one frame")
        var peak: Float = 0
        for x in frames {
            precondition(x.isFinite, "sample values must be finite")
            peak = max(peak, abs(x))
        }
        let scale = SampleBank.powerOfTwoScale(peak: peak)
        self.init(frameCount: frames.count / channels, channels: channels, scale: scale) { buffer in
            for (i, x) in frames.enumerated() {
                buffer[i] = Int16(max(-32767, min(32767, (x / scale).rounded())))
            }
        }
    }

    deinit {
        if !isAdopted { (buffer.baseAddress! - samplePadding * channels).deallocate() }
    }
}

/// The decoded bell samples, stored once for all voices.
///
/// Frames are kept as `Int16` with one power-of-two scale per sample: a voice reads half the
/// bytes of `Float` storage (mixing many voices is bound by memory bandwidth), and because the
/// scale is a power of two, `Float(stored) * scale` reproduces the stored value exactly.
/// Float samples are quantised relative to their own peak, so quiet samples keep their
/// resolution; 16-bit files are stored as they are, with scale 2⁻¹⁵.
///
/// A stereo sample is kept interleaved (left, right), with one scale for both sides. Every
/// sample has `samplePadding` frames of zeros before and after it, so an interpolating voice's
/// kernel never reads outside its memory.
///
/// Thread: filled on the control thread before an engine uses it; read-only afterwards.
public final class SampleBank {
    /// One buffer per sample: its frames (interleaved if stereo), inside its padding.
    private(set) var buffers: [UnsafeMutableBufferPointer<Int16>] = []
    /// Per sample: 1 (mono) or 2 (stereo, interleaved).
    public private(set) var channelCounts: [Int] = []
    /// Per sample: the scale that turns a stored value back into a linear amplitude.
    public private(set) var scales: [Float] = []
    /// Frames per second of every sample in the bank.
    public let sampleRate: Int

    /// An empty bank; add samples with `append`.
    public init(sampleRate: Int) {
        precondition(sampleRate > 0)
        self.sampleRate = sampleRate
    }

    /// A bank of mono `Float` samples (nominal range -1...1).
    public convenience init(samples: [[Float]], sampleRate: Int) {
        self.init(sampleRate: sampleRate)
        for sample in samples { append(sample) }
    }

    deinit {
        for (buffer, channels) in zip(buffers, channelCounts) {
            (buffer.baseAddress! - samplePadding * channels).deallocate()
        }
    }

    /// Takes over the samples of `other` (a bank of the same rate) without copying them, each
    /// after this bank's own, except those `reusing` gives an index of this bank for (the same
    /// sample, already here), which are freed. `other` is left empty. Returns each of `other`'s
    /// samples' index here (for its keys' and regions' `sampleIndex`).
    /// - Precondition: `reusing` has an entry per sample of `other`, each nil or an index here.
    public func absorb(_ other: SampleBank, reusing: [Int?]) -> [Int] {
        precondition(other.sampleRate == sampleRate && other !== self && reusing.count == other.count)
        var indices: [Int] = []
        for i in 0..<other.count {
            if let same = reusing[i] {
                precondition(same >= 0 && same < count)
                (other.buffers[i].baseAddress! - samplePadding * other.channelCounts[i]).deallocate()
                indices.append(same)
            } else {
                indices.append(buffers.count)
                buffers.append(other.buffers[i])
                channelCounts.append(other.channelCounts[i])
                scales.append(other.scales[i])
            }
        }
        other.buffers = []
        other.channelCounts = []
        other.scales = []
        return indices
    }

    /// Quantises and adds a sample; returns its index.
    /// - Precondition: at least one frame, every value finite.
    @discardableResult
    public func append(_ frames: [Float]) -> Int {
        append(interleaved: frames, channels: 1)
    }

    /// Quantises and adds a stereo sample (both sides the same length, one scale for both);
    /// returns its index.
    @discardableResult
    public func append(left: [Float], right: [Float]) -> Int {
        precondition(left.count == right.count, "both sides of a stereo sample have the same length")
        var interleaved = [Float](repeating: 0, count: 2 * left.count)
        for i in left.indices {
            interleaved[2 * i] = left[i]
            interleaved[2 * i + 1] = right[i]
        }
        return append(interleaved: interleaved, channels: 2)
    }

    /// Quantises and adds `channels` (1 or 2) interleaved channels; returns the sample's index.
    @discardableResult
    public func append(interleaved frames: [Float], channels: Int) -> Int {
        adopt(PreparedSample(interleaved: frames, channels: channels))
    }

    /// Adds a sample whose frames `fill` writes straight into the bank as 16-bit values that
    /// mean `value × scale` (`channels` interleaved): `fill` writes every value (the memory is
    /// not cleared first, only the padding around it). Returns its index. `fill` may throw, and
    /// then nothing is added.
    @discardableResult
    public func appendPCM16<E: Error>(
        frameCount: Int, channels: Int = 1, scale: Float,
        fill: (UnsafeMutableBufferPointer<Int16>) throws(E) -> Void
    ) throws(E) -> Int {
        adopt(try PreparedSample(frameCount: frameCount, channels: channels, scale: scale, fill: fill))
    }

    /// Adds a sample prepared outside the bank (on another thread, say), taking its memory
    /// without copying it; returns its index.
    /// - Precondition: `prepared` is in no bank yet.
    @discardableResult
    public func adopt(_ prepared: PreparedSample) -> Int {
        precondition(!prepared.isAdopted, "a prepared sample goes into one bank")
        prepared.isAdopted = true
        buffers.append(prepared.buffer)
        channelCounts.append(prepared.channels)
        scales.append(prepared.scale)
        return buffers.count - 1
    }

    /// Number of samples in the bank.
    public var count: Int { buffers.count }

    /// Frames of each sample (a stereo frame is a left and a right value).
    public var frameCounts: [Int] { zip(buffers, channelCounts).map { $0.count / $1 } }

    /// Frames of sample `index`.
    public func frameCount(of index: Int) -> Int { buffers[index].count / channelCounts[index] }

    /// Bytes of sample memory (for reports).
    public var byteCount: Int { buffers.reduce(0) { $0 + $1.count * MemoryLayout<Int16>.size } }

    /// First frame of sample `index` (for the engine's key table).
    package func frames(of index: Int) -> UnsafePointer<Int16> { UnsafePointer(buffers[index].baseAddress!) }

    /// The smallest power of two `s` with `peak / s <= 32767`, so the peak uses 15 bits.
    static func powerOfTwoScale(peak: Float) -> Float {
        var scale: Float = 1.0 / 32768.0
        if peak == 0 { return scale }
        while peak / scale > 32767 { scale *= 2 }
        while scale > Float.leastNormalMagnitude, peak / (scale / 2) <= 32767 { scale /= 2 }
        return scale
    }

    /// Frame `index` of sample `sample` (channel `channel` of a stereo one) as a linear
    /// amplitude (control thread, tests).
    public func value(sample: Int, frame index: Int, channel: Int = 0) -> Float {
        Float(buffers[sample][index * channelCounts[sample] + channel]) * scales[sample]
    }
}
