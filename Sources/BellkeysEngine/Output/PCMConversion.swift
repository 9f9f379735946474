/// Interleaved PCM sample formats for files and sound devices.
public enum OutputSampleFormat: String, CaseIterable, Sendable {
    case s16, s24, s32, f32

    /// Bytes per sample on a device and in `interleave`'s output (s24 is carried in 4).
    public var deviceByteCount: Int { self == .s16 ? 2 : 4 }

    /// Bytes per sample in a file (s24 is packed in 3 bytes there; devices use 4, see `interleave`).
    public var byteCount: Int {
        switch self {
        case .s16: 2
        case .s24: 3
        case .s32, .f32: 4
        }
    }
}

/// Converts mono float frames to interleaved PCM, the same value on every channel.
///
/// - `s16`: `Int16`, x × 32767, clipped, rounded to nearest (half to even).
/// - `s24`, `s32`: `Int32`, by the same rule at 24 or 32 bits, left-aligned in 32 bits.
/// - `f32`: `Float`, copied.
///
/// `output` must hold `frameCount × channels` values of the format's type.
/// Thread: any; real-time safe (the render thread uses it for the sound device).
@_noLocks
public func interleave(
    _ mono: UnsafePointer<Float>, frameCount: Int, channels: Int,
    format: OutputSampleFormat, into output: UnsafeMutableRawPointer
) {
    switch format {
    case .s16:
        let out = output.assumingMemoryBound(to: Int16.self)
        for i in 0..<frameCount {
            let q = pcm16(mono[i])
            for c in 0..<channels { out[i * channels + c] = q }
        }
    case .s24, .s32:
        let out = output.assumingMemoryBound(to: Int32.self)
        let bits: Int
        if case .s24 = format { bits = 24 } else { bits = 32 }
        for i in 0..<frameCount {
            let q = pcm32(mono[i], bits: bits)
            for c in 0..<channels { out[i * channels + c] = q }
        }
    case .f32:
        let out = output.assumingMemoryBound(to: Float.self)
        for i in 0..<frameCount {
            for c in 0..<channels { out[i * channels + c] = mono[i] }
        }
    }
}

/// Converts a left and a right channel to interleaved PCM, by the same rules as `interleave`:
/// the first channel is the left, the second the right, and any others (and a mono output)
/// the average of the two, which is exactly the mono mix while no bell is panned.
/// Thread: any; real-time safe.
@_noLocks
public func interleave(
    left: UnsafePointer<Float>, right: UnsafePointer<Float>, frameCount: Int, channels: Int,
    format: OutputSampleFormat, into output: UnsafeMutableRawPointer
) {
    switch format {
    case .s16:
        let out = output.assumingMemoryBound(to: Int16.self)
        for i in 0..<frameCount {
            let (l, r, m) = (left[i], right[i], (left[i] + right[i]) * 0.5)
            for c in 0..<channels { out[i * channels + c] = pcm16(channels == 1 || c >= 2 ? m : c == 0 ? l : r) }
        }
    case .s24, .s32:
        let out = output.assumingMemoryBound(to: Int32.self)
        let bits: Int
        if case .s24 = format { bits = 24 } else { bits = 32 }
        for i in 0..<frameCount {
            let (l, r, m) = (left[i], right[i], (left[i] + right[i]) * 0.5)
            for c in 0..<channels {
                out[i * channels + c] = pcm32(channels == 1 || c >= 2 ? m : c == 0 ? l : r, bits: bits)
            }
        }
    case .f32:
        let out = output.assumingMemoryBound(to: Float.self)
        for i in 0..<frameCount {
            let (l, r, m) = (left[i], right[i], (left[i] + right[i]) * 0.5)
            for c in 0..<channels { out[i * channels + c] = channels == 1 || c >= 2 ? m : c == 0 ? l : r }
        }
    }
}

/// Float to 16-bit: x × 32767, clipped, rounded to nearest (half to even). (libsndfile's own
/// conversion rounds down, a half-LSB bias.) Adding and taking away 1.5 × 2²³ rounds to the
/// nearest integer in a form that vectorises.
@_noLocks @inline(__always)
public func pcm16(_ x: Float) -> Int16 {
    let y = min(max(x * 32767, -32768), 32767)
    return Int16(Int32((y + 12_582_912) - 12_582_912))
}

/// Float to `bits`-bit PCM (24 or 32) by the same rule, left-aligned in 32 bits.
@_noLocks @inline(__always)
public func pcm32(_ x: Float, bits: Int) -> Int32 {
    let full = Double((1 << (bits - 1)) - 1)
    let y = min(max(Double(x) * full, -full - 1), full)
    // Rounds to nearest, half to even, as for 16 bits (1.5 × 2⁵² for doubles).
    return Int32((y + 6_755_399_441_055_744) - 6_755_399_441_055_744) << (32 - bits)
}
