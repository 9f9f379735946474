/// The room the bells ring in, as a teacher names it.
public enum ReverbPreset: String, Sendable, CaseIterable {
    /// No reverb: the dry bells, today's bytes.
    case off
    /// A classroom: short and close.
    case room
    /// A concert hall.
    case hall
    /// A stone church: the long ring of a tower's bells.
    case church

    /// Decay time (RT60, seconds) at low frequencies, the decay at high frequencies as a share
    /// of it, the delay before the first reflection (seconds), and the size of the network's
    /// delays against a hall's.
    var design: (seconds: Double, highShare: Double, predelay: Double, size: Double) {
        switch self {
        case .off: return (0, 1, 0, 1)
        case .room: return (0.7, 0.55, 0.008, 0.55)
        case .hall: return (2.0, 0.5, 0.022, 1.0)
        case .church: return (4.5, 0.45, 0.035, 1.6)
        }
    }
}

/// The reverb of an instrument: which room, and how loud its sound is against the bells'.
public struct ReverbSettings: Sendable, Equatable {
    public var preset: ReverbPreset
    /// The reverb's output level, 0 to 1, on top of the dry bells (which never change).
    public var mix: Double

    public static let off = ReverbSettings(preset: .off, mix: 0)
    public static let defaultMix = 0.3

    public init(preset: ReverbPreset, mix: Double = ReverbSettings.defaultMix) {
        self.preset = preset
        self.mix = mix
    }
}

/// A feedback delay network (Jot's design): eight delay lines whose outputs are mixed by an
/// orthogonal 8 × 8 Hadamard matrix and fed back, each line losing exactly what makes every
/// path through it decay by 60 dB in the preset's RT60 (gain 10^(-3 d / (fs T60)) for a line of
/// d frames), with a one-pole low-pass in each line that makes high frequencies die sooner, as in
/// a real room. A pre-delay and two all-pass diffusers smear the input first; the left and right
/// outputs take the lines with two orthogonal sign patterns, so the two sides are decorrelated
/// (not dual mono). Everything is allocated at init; `process` is allocation- and lock-free.
///
/// Silence: when the input has been zero and every line below 1e-6 (-120 dBFS) for longer than
/// the longest path through the network, the state is cleared and `process` does nothing until
/// sound comes in again: the tail ends in digital zero within a bounded time, and no value ever
/// enters the denormal range (see `flush`), so a decaying tail costs what a
/// loud one does (measured for an impulse: 1.3 times the RT60; at most about twice).
/// Thread: render (built on the control thread).
struct Reverb {
    static let lineCount = 8
    /// Delay lengths at 48 kHz for a hall (size 1): primes, spread over 21 to 61 ms (scaled to
    /// other rooms and rates and rounded, they stay distinct, if not all prime).
    static let baseLengths = [1_031, 1_327, 1_523, 1_801, 2_083, 2_351, 2_659, 2_909]
    static let diffuserLengths = [142, 379]
    static let gateLevel: Float = 1e-6

    let lines: UnsafeMutablePointer<Float>
    let lengths: UnsafeMutablePointer<Int>
    let positions: UnsafeMutablePointer<Int>
    let gains: UnsafeMutablePointer<Float>
    let lowpass: UnsafeMutablePointer<Float>
    let stride: Int
    let damping: Float
    let predelayLine: UnsafeMutablePointer<Float>
    let predelayLength: Int
    var predelayPosition = 0
    let diffusers: UnsafeMutablePointer<Float>
    let diffuserLength0: Int, diffuserLength1: Int
    var diffuserPosition0 = 0, diffuserPosition1 = 0
    let wet: Float
    /// The input's DC blocker (a one-pole high-pass, pole 0.999: 7.6 Hz at 48 kHz, 15 Hz at
    /// 96 kHz): its last input and output.
    var highPassIn: Float = 0, highPassOut: Float = 0
    /// Frames of silence in and out so far, and how many make the network quiet for good.
    var quietFrames = 0
    let quietNeeded: Int
    /// Whether the state is all zero (nothing to do while the input is silent).
    var idle = true
    /// All sound off: the room's output fading to silence, after which its state is cleared.
    var fade = Ramp(1)

    init(settings: ReverbSettings, sampleRate: Int) {
        let design = settings.preset.design
        let rate = Double(sampleRate)
        let scale = design.size * rate / 48_000
        stride = Int((Double(Reverb.baseLengths.last!) * scale).rounded()) + 1
        lines = .allocate(capacity: Reverb.lineCount * stride)
        lines.initialize(repeating: 0, count: Reverb.lineCount * stride)
        lengths = .allocate(capacity: Reverb.lineCount)
        positions = .allocate(capacity: Reverb.lineCount)
        positions.initialize(repeating: 0, count: Reverb.lineCount)
        gains = .allocate(capacity: Reverb.lineCount)
        lowpass = .allocate(capacity: Reverb.lineCount)
        lowpass.initialize(repeating: 0, count: Reverb.lineCount)
        let seconds = max(design.seconds, 0.01)
        for i in 0..<Reverb.lineCount {
            let length = max(1, Int((Double(Reverb.baseLengths[i]) * scale).rounded()))
            lengths[i] = length
            // Each pass through line i loses 60 dB × (its length / T60).
            gains[i] = Float(exp10(-3 * Double(length) / (rate * seconds)))
        }
        // One-pole low-pass y += c (x - y) in each line: its loss at high frequencies shortens
        // their decay to `highShare` of the RT60 (set for the mean line at about 4 kHz).
        let meanLength = Double(Reverb.baseLengths.reduce(0, +)) / Double(Reverb.lineCount) * scale
        let extraLoss = -3 * meanLength / (rate * seconds) * (1 / design.highShare - 1)   // in decades
        let wanted = exp10(extraLoss)                                 // |H| at 4 kHz
        let w = 2 * 3.141_592_653_589_793 * 4_000 / rate
        // |H(w)| = c / sqrt(1 - 2(1-c) cos w + (1-c)^2): solve for c by bisection.
        var low = 0.0, high = 1.0
        let cosine = sineCosine(min(w, 1.570_796_326_794_896_6)).cosine
        for _ in 0..<60 {
            let c = (low + high) / 2
            let r = 1 - c
            let magnitude = c / (1 - 2 * r * cosine + r * r).squareRoot()
            if magnitude < wanted { low = c } else { high = c }
        }
        damping = Float((low + high) / 2)
        predelayLength = max(1, Int((design.predelay * rate).rounded()))
        predelayLine = .allocate(capacity: predelayLength)
        predelayLine.initialize(repeating: 0, count: predelayLength)
        diffuserLength0 = max(1, Int((Double(Reverb.diffuserLengths[0]) * scale).rounded()))
        diffuserLength1 = max(1, Int((Double(Reverb.diffuserLengths[1]) * scale).rounded()))
        diffusers = .allocate(capacity: diffuserLength0 + diffuserLength1)
        diffusers.initialize(repeating: 0, count: diffuserLength0 + diffuserLength1)
        wet = Float(settings.mix)
        quietNeeded = stride + predelayLength + diffuserLength0 + diffuserLength1
    }

    func deallocate() {
        lines.deallocate()
        lengths.deallocate()
        positions.deallocate()
        gains.deallocate()
        lowpass.deallocate()
        predelayLine.deallocate()
        diffusers.deallocate()
    }

    /// Runs `n` frames of `input` (the send, mono) through the room and adds the result × the
    /// mix into `left` and `right`. Thread: render. Real-time safe.
    @_noLocks
    mutating func process(input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>,
                          right: UnsafeMutablePointer<Float>, frameCount n: Int, inputIsSilent: Bool) {
        if idle && inputIsSilent { return }
        idle = false
        // Every state that decays by itself (the low-passes, the diffusers, the DC blocker) is
        // rounded through `flush`, so none ever reaches the subnormal range, where a CPU slows
        // down many times: a value under about 1e-25 (-500 dB) becomes exactly 0.
        let g = 0.353_553_390_593_273_8 as Float          // 1/√8: keeps the Hadamard orthonormal
        let out = wet * 0.5
        let fading = fade.framesLeft > 0
        let fadeStart = fade
        let c = damping
        var loudest: Float = 0
        for j in 0..<n {
            // No DC into the room (an impulse's, a bell's offset), then the pre-delay, then two
            // all-pass diffusers (gain 0.6).
            let dcFree = flush(input[j] - highPassIn + 0.999 * highPassOut)
            highPassIn = input[j]
            highPassOut = dcFree
            let x = predelayLine[predelayPosition]
            predelayLine[predelayPosition] = dcFree
            predelayPosition += 1
            if predelayPosition == predelayLength { predelayPosition = 0 }
            let a0 = allPass(x, line: diffusers, length: diffuserLength0, position: &diffuserPosition0)
            let a1 = allPass(a0, line: diffusers + diffuserLength0, length: diffuserLength1, position: &diffuserPosition1)

            // The lines' outputs, each lowered by its gain and low-passed.
            var s0 = lines[positions[0]] * gains[0], s1 = lines[stride + positions[1]] * gains[1]
            var s2 = lines[2 * stride + positions[2]] * gains[2], s3 = lines[3 * stride + positions[3]] * gains[3]
            var s4 = lines[4 * stride + positions[4]] * gains[4], s5 = lines[5 * stride + positions[5]] * gains[5]
            var s6 = lines[6 * stride + positions[6]] * gains[6], s7 = lines[7 * stride + positions[7]] * gains[7]
            lowpass[0] = flush(lowpass[0] + c * (s0 - lowpass[0])); s0 = lowpass[0]
            lowpass[1] = flush(lowpass[1] + c * (s1 - lowpass[1])); s1 = lowpass[1]
            lowpass[2] = flush(lowpass[2] + c * (s2 - lowpass[2])); s2 = lowpass[2]
            lowpass[3] = flush(lowpass[3] + c * (s3 - lowpass[3])); s3 = lowpass[3]
            lowpass[4] = flush(lowpass[4] + c * (s4 - lowpass[4])); s4 = lowpass[4]
            lowpass[5] = flush(lowpass[5] + c * (s5 - lowpass[5])); s5 = lowpass[5]
            lowpass[6] = flush(lowpass[6] + c * (s6 - lowpass[6])); s6 = lowpass[6]
            lowpass[7] = flush(lowpass[7] + c * (s7 - lowpass[7])); s7 = lowpass[7]

            // Two orthogonal sign patterns for the two sides.
            var level = out
            if fading {
                level *= fadeStart.value(at: j)
            }
            left[j] += level * ((s0 - s1) + (s2 - s3) + (s4 - s5) + (s6 - s7))
            right[j] += level * ((s0 + s1) - (s2 + s3) + (s4 + s5) - (s6 + s7))
            let m0 = max(max(s0.magnitude, s1.magnitude), max(s2.magnitude, s3.magnitude))
            let m1 = max(max(s4.magnitude, s5.magnitude), max(s6.magnitude, s7.magnitude))
            loudest = max(loudest, max(max(m0, m1), dcFree.magnitude))

            // The fast Hadamard transform: three stages of sums and differences.
            let t0 = s0 + s1, t1 = s0 - s1, t2 = s2 + s3, t3 = s2 - s3
            let t4 = s4 + s5, t5 = s4 - s5, t6 = s6 + s7, t7 = s6 - s7
            let u0 = t0 + t2, u1 = t1 + t3, u2 = t0 - t2, u3 = t1 - t3
            let u4 = t4 + t6, u5 = t5 + t7, u6 = t4 - t6, u7 = t5 - t7
            let feed = a1 * g
            lines[positions[0]] = (u0 + u4) * g + feed
            lines[stride + positions[1]] = (u1 + u5) * g - feed
            lines[2 * stride + positions[2]] = (u2 + u6) * g + feed
            lines[3 * stride + positions[3]] = (u3 + u7) * g - feed
            lines[4 * stride + positions[4]] = (u0 - u4) * g + feed
            lines[5 * stride + positions[5]] = (u1 - u5) * g - feed
            lines[6 * stride + positions[6]] = (u2 - u6) * g + feed
            lines[7 * stride + positions[7]] = (u3 - u7) * g - feed
            for i in 0..<Reverb.lineCount {
                positions[i] += 1
                if positions[i] == lengths[i] { positions[i] = 0 }
            }
        }
        if fading {
            fade.advance(by: n)
            // Faded out: empty the room, and let the next sound in at the full level.
            if fade.framesLeft == 0 {
                clear()
                fade = Ramp(1)
                return
            }
        }
        // The gate: quiet in and out for longer than any path through the network holds sound
        // (not while a fade is under way: its end empties the room anyway).
        if inputIsSilent && loudest < Reverb.gateLevel && !fading {
            quietFrames += n
            if quietFrames >= quietNeeded { clear() }
        } else {
            quietFrames = 0
        }
    }

    /// All sound off: the room fades out over `frames` and is emptied. Thread: render.
    @_noLocks
    mutating func silence(frames: Int) {
        if idle { return }
        fade.move(to: 0, frames: max(1, frames))
    }

    /// Empties the network: digital silence from here on. Thread: render. Real-time safe.
    @_noLocks
    mutating func clear() {
        lines.update(repeating: 0, count: Reverb.lineCount * stride)
        lowpass.update(repeating: 0, count: Reverb.lineCount)
        predelayLine.update(repeating: 0, count: predelayLength)
        diffusers.update(repeating: 0, count: diffuserLength0 + diffuserLength1)
        highPassIn = 0
        highPassOut = 0
        quietFrames = 0
        fade = Ramp(1)
        idle = true
    }
}

/// One sample through a Schroeder all-pass of gain 0.6 whose delay is `line` (`length` frames,
/// at `position`, which moves on). Real-time safe.
@_noLocks
@inline(__always)
func allPass(_ x: Float, line: UnsafeMutablePointer<Float>, length: Int, position: inout Int) -> Float {
    let delayed = line[position]
    let v = flush(x + 0.6 * delayed)
    line[position] = v
    position += 1
    if position == length { position = 0 }
    return delayed - 0.6 * v
}

/// `x` with anything under about 1e-25 rounded to exactly 0 (adding and taking away 1e-18;
/// the compiler keeps both, as IEEE arithmetic requires). Real-time safe.
@_noLocks
@inline(__always)
func flush(_ x: Float) -> Float { (x + 1e-18) - 1e-18 }

/// 10^x without Foundation (control thread).
func exp10(_ x: Double) -> Double { exp2(x * 3.321_928_094_887_362_4) }
