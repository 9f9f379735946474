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
///
/// `process` works on chunks of up to 64 frames, 4 frames in each vector operation (see there).
/// Thread: render (built on the control thread).
struct Reverb {
    static let lineCount = 8
    /// Delay lengths at 48 kHz for a hall (size 1): primes, spread over 21 to 61 ms (scaled to
    /// other rooms and rates and rounded, they stay distinct, if not all prime).
    static let baseLengths = [1_031, 1_327, 1_523, 1_801, 2_083, 2_351, 2_659, 2_909]
    static let diffuserLengths = [142, 379]
    static let gateLevel: Float = 1e-6
    /// The most frames `process` mixes at a time (a multiple of 4; fewer if a line is shorter).
    static let chunkCapacity = 64

    // The parts of `work` (in floats, each 16-byte aligned).
    /// Per line: its low-pass's last 4 outputs, then a chunk's outputs (and up to 3 past them).
    static let outputsStride = 4 + chunkCapacity + 4
    static let outputsPart = 0
    /// Per line (4 each): lanes 1, 2, 3 are its output 3, 2, 1 frames before the chunk.
    static let historyPart = outputsPart + lineCount * outputsStride
    /// Per line (4 each): what `lowpassLines` and `mixLines` put back into the line.
    static let savedPart = historyPart + 4 * lineCount
    /// The input's last 4 frames, then a chunk of it (and up to 3 past it).
    static let inputPart = savedPart + 4 * lineCount
    /// The DC blocker's last 4 outputs, then the chunk's (and up to 3 past it), which the rest
    /// of the input chain changes in place.
    static let diffusedPart = inputPart + 4 + chunkCapacity + 4
    /// A chunk's last frames when they are fewer than 4: what goes to the left, to the right.
    static let sidesPart = diffusedPart + 4 + chunkCapacity + 4
    /// Everything before is state or scratch (zeroed by `clear`); from here on, constants:
    /// per line c g / √8 (see `lowpassLines`), then 1 - c, (1 - c)^4, then the DC blocker's
    /// a, a - 1, -a³, a⁴ (see `lowpassGroups`), each × 4.
    static let factorsPart = sidesPart + 8
    static let highPassPart = factorsPart + 4 * lineCount + 8
    static let workCount = highPassPart + 16

    /// Line i's values are `lines[i * stride + 4 ..< i * stride + 4 + lengths[i]]`, followed
    /// by a copy of its first `chunkFrames` values (so that a chunk of it is one run wherever it
    /// starts) and 4 more; the 4 before are where `lowpassLines` puts its last outputs.
    let lines: UnsafeMutablePointer<Float>
    let lengths: UnsafeMutablePointer<Int>
    let positions: UnsafeMutablePointer<Int>
    let stride: Int
    /// Frames per chunk: at most `chunkCapacity`, and no more than the shortest line.
    let chunkFrames: Int
    /// State, scratch and constants of `process` (see `outputsPart` and the rest); 64-byte
    /// aligned.
    let work: UnsafeMutablePointer<Float>
    let predelayLine: UnsafeMutablePointer<Float>
    let predelayLength: Int
    var predelayPosition = 0
    let diffusers: UnsafeMutablePointer<Float>
    let diffuserLength0: Int, diffuserLength1: Int
    var diffuserPosition0 = 0, diffuserPosition1 = 0
    let wet: Float
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
        let longest = Int((Double(Reverb.baseLengths.last!) * scale).rounded())
        lengths = .allocate(capacity: Reverb.lineCount)
        positions = .allocate(capacity: Reverb.lineCount)
        positions.initialize(repeating: 0, count: Reverb.lineCount)
        var shortest = Int.max
        for i in 0..<Reverb.lineCount {
            lengths[i] = max(1, Int((Double(Reverb.baseLengths[i]) * scale).rounded()))
            shortest = min(shortest, lengths[i])
        }
        chunkFrames = min(Reverb.chunkCapacity, shortest)
        stride = 4 + max(longest, 1) + Reverb.chunkCapacity + 4
        lines = .allocate(capacity: Reverb.lineCount * stride)
        lines.initialize(repeating: 0, count: Reverb.lineCount * stride)
        work = UnsafeMutableRawPointer.allocate(byteCount: Reverb.workCount * MemoryLayout<Float>.stride, alignment: 64)
            .initializeMemory(as: Float.self, repeating: 0, count: Reverb.workCount)
        // One-pole low-pass y += c (x - y) in each line: its loss at high frequencies shortens
        // their decay to `highShare` of the RT60 (set for the mean line at about 4 kHz).
        let seconds = max(design.seconds, 0.01)
        let meanLength = Double(Reverb.baseLengths.reduce(0, +)) / Double(Reverb.lineCount) * scale
        let extraLoss = -3 * meanLength / (rate * seconds) * (1 / design.highShare - 1) // in decades
        let wanted = exp10(extraLoss) // |H| at 4 kHz
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
        let damping = Float((low + high) / 2)
        let keep = 1 - damping
        for i in 0..<Reverb.lineCount {
            // Each pass through line i loses 60 dB × (its length / T60); the low-pass takes c of
            // that, × 1/√8, which keeps the Hadamard orthonormal (the lines hold its rows
            // unscaled).
            let gain = Float(exp10(-3 * Double(lengths[i]) / (rate * seconds)))
            let factor = damping * gain * 0.353_553_390_593_273_8
            for lane in 0..<4 { work[Reverb.factorsPart + 4 * i + lane] = factor }
        }
        for lane in 0..<4 {
            work[Reverb.factorsPart + 4 * Reverb.lineCount + lane] = keep
            work[Reverb.factorsPart + 4 * Reverb.lineCount + 4 + lane] = keep * keep * keep * keep
        }
        let a: Float = 0.999
        let highPass: [Float] = [a, a - 1, -(a * a * a), a * a * a * a]
        for k in 0..<4 {
            for lane in 0..<4 { work[Reverb.highPassPart + 4 * k + lane] = highPass[k] }
        }
        predelayLength = max(1, Int((design.predelay * rate).rounded()))
        predelayLine = .allocate(capacity: predelayLength)
        predelayLine.initialize(repeating: 0, count: predelayLength)
        diffuserLength0 = max(1, Int((Double(Reverb.diffuserLengths[0]) * scale).rounded()))
        diffuserLength1 = max(1, Int((Double(Reverb.diffuserLengths[1]) * scale).rounded()))
        diffusers = .allocate(capacity: diffuserLength0 + diffuserLength1)
        diffusers.initialize(repeating: 0, count: diffuserLength0 + diffuserLength1)
        wet = Float(settings.mix)
        quietNeeded = longest + 1 + predelayLength + diffuserLength0 + diffuserLength1
    }

    func deallocate() {
        lines.deallocate()
        lengths.deallocate()
        positions.deallocate()
        UnsafeMutableRawPointer(work).deallocate()
        predelayLine.deallocate()
        diffusers.deallocate()
    }

    /// Runs `n` frames of `input` (the send, mono) through the room and adds the result × the
    /// mix into `left` and `right`. Thread: render. Real-time safe.
    ///
    /// In chunks of at most `chunkFrames` frames, never more than the shortest line, so that
    /// nothing a chunk reads from the lines was written in it. Each step runs over the whole
    /// chunk, 4 frames at a time (a vector): the lines' outputs through their low-passes (and
    /// the input through the DC blocker); the rest of the input chain; the Hadamard transform,
    /// back into the lines and out to the two sides. The recursions (the low-passes, the DC
    /// blocker) are unrolled over the 4 frames, so no vector has its lanes moved.
    @_noLocks
    mutating func process(
        input: UnsafeMutablePointer<Float>, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>, frameCount n: Int, inputIsSilent: Bool
    ) {
        if idle && inputIsSilent { return }
        idle = false
        // Every state that decays by itself (the low-passes, the diffusers, the DC blocker) is
        // rounded through `flush` (on vectors: (v + 1e-18) - 1e-18), so none ever reaches the
        // subnormal range, where a CPU slows down many times: a value under about 1e-25 (-500 dB)
        // becomes exactly 0.
        let out = wet * 0.5
        let fading = fade.framesLeft > 0
        // Only the gate needs the loudness: while the input is silent and no fade is under way.
        let watch = inputIsSilent && !fading
        var loudest = SIMD4<Float>(repeating: 0)
        var done = 0
        while done < n {
            let m = min(n &- done, chunkFrames)
            takeInput(input + done, frameCount: m)
            lowpassLines(frameCount: m, loudest: &loudest, watch: watch)
            diffuse(frameCount: m)
            mixLines(frameCount: m, left: left + done, right: right + done, level: out, fading: fading, frame: done)
            advanceLines(by: m)
            done &+= m
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
        let loudestOfAll = max(max(loudest[0], loudest[1]), max(loudest[2], loudest[3]))
        if inputIsSilent && loudestOfAll < Reverb.gateLevel && !fading {
            quietFrames += n
            if quietFrames >= quietNeeded { clear() }
        } else {
            quietFrames = 0
        }
    }

    /// `m` frames of `input` into the input part of `work` (after the last 4 frames before them).
    @_noLocks
    @inline(__always)
    func takeInput(_ input: UnsafeMutablePointer<Float>, frameCount m: Int) {
        let chunk = work + (Reverb.inputPart &+ 4)
        var j = 0
        while j &+ 4 <= m {
            UnsafeMutableRawPointer(chunk + j).storeBytes(
                of: UnsafeRawPointer(input + j).loadUnaligned(as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
            j &+= 4
        }
        while j < m {
            chunk[j] = input[j]
            j &+= 1
        }
    }

    /// Line i at its position (its next output), as a pointer.
    @_noLocks
    @inline(__always)
    func cursor(_ i: Int) -> UnsafeMutablePointer<Float> {
        lines + (i &* stride &+ 4 &+ positions[i])
    }

    /// The lines' next `m` outputs, each lowered by its gain and low-passed (y += c (x - y)),
    /// into the outputs part of `work`, and the input's chunk through the DC blocker into the
    /// diffused part; with `watch`, the largest magnitude of both into `loudest`.
    ///
    /// y[j] = (1 - c) y[j - 1] + c g x[j], 4 frames at once, unrolled:
    /// y[j] = c g (((x[j - 3] k + x[j - 2]) k + x[j - 1]) k + x[j]) + k⁴ y[j - 4], k = 1 - c:
    /// each vector of x is one run of the line (its 3 outputs before the chunk are put in front
    /// of it for the time), no lanes move.
    @_noLocks
    @inline(__always)
    func lowpassLines(frameCount m: Int, loudest: inout SIMD4<Float>, watch: Bool) {
        let history = UnsafeMutableRawPointer(work + Reverb.historyPart)
        let saved = UnsafeMutableRawPointer(work + Reverb.savedPart)
        for i in 0..<Reverb.lineCount {
            let front = UnsafeMutableRawPointer(cursor(i) - 4)
            saved.storeBytes(
                of: front.loadUnaligned(as: SIMD4<Float>.self), toByteOffset: 16 &* i, as: SIMD4<Float>.self)
            front.storeBytes(of: history.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self), as: SIMD4<Float>.self)
        }
        // (Two copies of the loop: the one without the loudness is the one that runs while
        // there is input.)
        if watch {
            lowpassGroups(frameCount: m, loudest: &loudest, watch: true)
        } else {
            lowpassGroups(frameCount: m, loudest: &loudest, watch: false)
        }
        // The DC blocker's: the frames of a last group of 4 that are in the chunk; its last 4
        // inputs and outputs, in front of the next chunk's.
        let highPassIn = work + (Reverb.inputPart &+ 4), highPassOut = work + (Reverb.diffusedPart &+ 4)
        if watch {
            for j in (m & ~3)..<m { loudest[0] = max(loudest[0], highPassOut[j].magnitude) }
        }
        UnsafeMutableRawPointer(highPassIn - 4).storeBytes(
            of: UnsafeRawPointer(highPassIn + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
            as: SIMD4<Float>.self)
        UnsafeMutableRawPointer(highPassOut - 4).storeBytes(
            of: UnsafeRawPointer(highPassOut + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
            as: SIMD4<Float>.self)
        for i in 0..<Reverb.lineCount {
            let run = cursor(i), outputs = work + (Reverb.outputsPart &+ i &* Reverb.outputsStride)
            // The frames of a last group of 4 that are in the chunk.
            if watch {
                for j in (m & ~3)..<m { loudest[0] = max(loudest[0], outputs[4 &+ j].magnitude) }
            }
            // For the next chunk: the last 3 outputs of the line (before what was in front of it
            // goes back: with a chunk under 3 frames, some are from there), the last 4 ys.
            history.storeBytes(
                of: UnsafeRawPointer(run + (m &- 4)).loadUnaligned(as: SIMD4<Float>.self),
                toByteOffset: 16 &* i, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run - 4).storeBytes(
                of: saved.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(outputs).storeBytes(
                of: UnsafeRawPointer(outputs + m).loadUnaligned(as: SIMD4<Float>.self),
                as: SIMD4<Float>.self)
        }
    }

    /// The loop of `lowpassLines`: 4 frames of each line at a time (a last group of them may
    /// run past the chunk; its loudness is not taken here).
    @_noLocks
    @inline(__always)
    func lowpassGroups(frameCount m: Int, loudest: inout SIMD4<Float>, watch: Bool) {
        let factors = UnsafeRawPointer(work + Reverb.factorsPart)
        let keep = factors.load(fromByteOffset: 16 &* Reverb.lineCount, as: SIMD4<Float>.self)
        let keep4 = factors.load(fromByteOffset: 16 &* Reverb.lineCount &+ 16, as: SIMD4<Float>.self)
        let outputs = UnsafeMutableRawPointer(work + Reverb.outputsPart)
        let highPass = UnsafeRawPointer(work + Reverb.highPassPart)
        let a = highPass.load(as: SIMD4<Float>.self), aLess1 = highPass.load(fromByteOffset: 16, as: SIMD4<Float>.self)
        let a3 = highPass.load(fromByteOffset: 32, as: SIMD4<Float>.self),
            a4 = highPass.load(fromByteOffset: 48, as: SIMD4<Float>.self)
        let highPassIn = UnsafeRawPointer(work + (Reverb.inputPart &+ 4))
        let highPassOut = UnsafeMutableRawPointer(work + (Reverb.diffusedPart &+ 4))
        let run0 = cursor(0), run1 = cursor(1), run2 = cursor(2), run3 = cursor(3)
        let run4 = cursor(4), run5 = cursor(5), run6 = cursor(6), run7 = cursor(7)
        var group = 0
        while group < m {
            let q = group, whole = q &+ 4 <= m
            /// Line i (at `run`) for frames q ..< q + 4.
            @inline(__always)
            func lowpass(_ i: Int, _ run: UnsafeMutablePointer<Float>, _ loudest: inout SIMD4<Float>) {
                let x = UnsafeRawPointer(run + q)
                let o = 4 &* (i &* Reverb.outputsStride &+ q)
                var h =
                    x.loadUnaligned(fromByteOffset: -12, as: SIMD4<Float>.self) * keep
                    + x.loadUnaligned(fromByteOffset: -8, as: SIMD4<Float>.self)
                h = h * keep + x.loadUnaligned(fromByteOffset: -4, as: SIMD4<Float>.self)
                h = h * keep + x.loadUnaligned(as: SIMD4<Float>.self)
                var y =
                    h * factors.load(fromByteOffset: 16 &* i, as: SIMD4<Float>.self)
                    + outputs.load(fromByteOffset: o, as: SIMD4<Float>.self) * keep4
                y = (y + 1e-18) - 1e-18 // flush, lane by lane
                outputs.storeBytes(of: y, toByteOffset: o &+ 16, as: SIMD4<Float>.self)
                if watch && whole { loudest = pointwiseLarger(loudest, magnitude(y)) }
            }
            lowpass(0, run0, &loudest)
            lowpass(1, run1, &loudest)
            lowpass(2, run2, &loudest)
            lowpass(3, run3, &loudest)
            lowpass(4, run4, &loudest)
            lowpass(5, run5, &loudest)
            lowpass(6, run6, &loudest)
            lowpass(7, run7, &loudest)
            // No DC into the room (an impulse's, a bell's offset): y = x - x' + a y', a = 0.999
            // (7.6 Hz at 48 kHz, 15 Hz at 96 kHz), unrolled as the low-passes are: y[j] = x[j]
            // + (a - 1) ((x[j - 3] a + x[j - 2]) a + x[j - 1]) - a³ x[j - 4] + a⁴ y[j - 4].
            // (Here, where its steps from one group of frames to the next overlap the lines'.)
            let x = highPassIn + 4 &* q
            var h =
                x.loadUnaligned(fromByteOffset: -12, as: SIMD4<Float>.self) * a
                + x.loadUnaligned(fromByteOffset: -8, as: SIMD4<Float>.self)
            h = h * a + x.loadUnaligned(fromByteOffset: -4, as: SIMD4<Float>.self)
            var y =
                (x.load(as: SIMD4<Float>.self) + h * aLess1)
                + (x.load(fromByteOffset: -16, as: SIMD4<Float>.self) * a3
                    + highPassOut.load(fromByteOffset: 4 &* q &- 16, as: SIMD4<Float>.self) * a4)
            y = (y + 1e-18) - 1e-18
            highPassOut.storeBytes(of: y, toByteOffset: 4 &* q, as: SIMD4<Float>.self)
            if watch && whole { loudest = pointwiseLarger(loudest, magnitude(y)) }
            group &+= 4
        }
    }

    /// The Hadamard transform of the low-passes' `m` outputs, with the input (after the input
    /// chain), back into the lines at their positions; rows 1 and 2 × the mix (and the fade)
    /// into `left` and `right` (`frame`: where they are in the call, for the fade).
    @_noLocks
    @inline(__always)
    func mixLines(
        frameCount m: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        level out: Float, fading: Bool, frame: Int
    ) {
        // A last group of 4 frames writes past the chunk: what was there goes back after.
        let past = (4 &- m & 3) & 3, saved = work + Reverb.savedPart
        for i in 0..<Reverb.lineCount {
            let run = cursor(i)
            for k in 0..<past { saved[i &* 4 &+ k] = run[m &+ k] }
        }
        let outputs = UnsafeRawPointer(work + Reverb.outputsPart + 4)
        let stride = 4 &* Reverb.outputsStride
        let diffused = UnsafeRawPointer(work + (Reverb.diffusedPart &+ 4))
        let sides = work + Reverb.sidesPart
        let fadeStart = fade
        let run0 = cursor(0), run1 = cursor(1), run2 = cursor(2), run3 = cursor(3)
        let run4 = cursor(4), run5 = cursor(5), run6 = cursor(6), run7 = cursor(7)
        var q = 0
        while q < m {
            let o = 4 &* q
            // The input goes into the lines with alternating signs (+ - + - + - + -): the
            // Hadamard's column 1, so it is added to line 1's output before the transform.
            let feed = diffused.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let s0 = outputs.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let s1 = outputs.load(fromByteOffset: o &+ stride, as: SIMD4<Float>.self) + feed
            let s2 = outputs.load(fromByteOffset: o &+ 2 &* stride, as: SIMD4<Float>.self)
            let s3 = outputs.load(fromByteOffset: o &+ 3 &* stride, as: SIMD4<Float>.self)
            let s4 = outputs.load(fromByteOffset: o &+ 4 &* stride, as: SIMD4<Float>.self)
            let s5 = outputs.load(fromByteOffset: o &+ 5 &* stride, as: SIMD4<Float>.self)
            let s6 = outputs.load(fromByteOffset: o &+ 6 &* stride, as: SIMD4<Float>.self)
            let s7 = outputs.load(fromByteOffset: o &+ 7 &* stride, as: SIMD4<Float>.self)
            // The fast Hadamard transform: three stages of sums and differences.
            let t0 = s0 + s1, t1 = s0 - s1, t2 = s2 + s3, t3 = s2 - s3
            let t4 = s4 + s5, t5 = s4 - s5, t6 = s6 + s7, t7 = s6 - s7
            let u0 = t0 + t2, u1 = t1 + t3, u2 = t0 - t2, u3 = t1 - t3
            let u4 = t4 + t6, u5 = t5 + t7, u6 = t4 - t6, u7 = t5 - t7
            // Back into the lines.
            let row1 = u1 + u5, row2 = u2 + u6
            UnsafeMutableRawPointer(run0 + q).storeBytes(of: u0 + u4, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run1 + q).storeBytes(of: row1, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run2 + q).storeBytes(of: row2, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run3 + q).storeBytes(of: u3 + u7, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run4 + q).storeBytes(of: u0 - u4, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run5 + q).storeBytes(of: u1 - u5, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run6 + q).storeBytes(of: u2 - u6, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(run7 + q).storeBytes(of: u3 - u7, as: SIMD4<Float>.self)

            // Two orthogonal sign patterns for the two sides: the Hadamard's rows 1
            // (+ - + - + - + -) on the left, 2 (+ + - - + + - -) on the right, of the lines'
            // outputs alone (row 1 took the input × -1, row 2 × 1).
            var level = SIMD4<Float>(repeating: out)
            if fading {
                let f = frame &+ q
                level *= SIMD4(
                    fadeStart.value(at: f), fadeStart.value(at: f &+ 1),
                    fadeStart.value(at: f &+ 2), fadeStart.value(at: f &+ 3))
            }
            let toLeft = level * (row1 + feed), toRight = level * (row2 - feed)
            if q &+ 4 <= m {
                let l = UnsafeMutableRawPointer(left + q), r = UnsafeMutableRawPointer(right + q)
                l.storeBytes(of: l.loadUnaligned(as: SIMD4<Float>.self) + toLeft, as: SIMD4<Float>.self)
                r.storeBytes(of: r.loadUnaligned(as: SIMD4<Float>.self) + toRight, as: SIMD4<Float>.self)
            } else {
                // (Through memory: lanes taken out of the vectors here would make the optimizer
                // split the vectors of the loop.)
                UnsafeMutableRawPointer(sides).storeBytes(of: toLeft, as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(sides + 4).storeBytes(of: toRight, as: SIMD4<Float>.self)
                for k in 0..<(m &- q) {
                    left[q &+ k] += sides[k]
                    right[q &+ k] += sides[4 &+ k]
                }
            }
            q &+= 4
        }
        for i in 0..<Reverb.lineCount {
            let run = cursor(i)
            for k in 0..<past { run[m &+ k] = saved[i &* 4 &+ k] }
        }
    }

    /// After `m` frames were written at the lines' positions: where that went past a line's end
    /// (into the copy of its start), the same values at its start; where it wrote the start,
    /// the copy too. Then the positions move on by `m`.
    @_noLocks
    @inline(__always)
    func advanceLines(by m: Int) {
        for i in 0..<Reverb.lineCount {
            let line = lines + (i &* stride &+ 4)
            let position = positions[i], length = lengths[i]
            let end = position &+ m
            if end > length {
                for j in length..<end { line[j &- length] = line[j] }
            }
            if position < chunkFrames {
                for j in position..<min(end, chunkFrames) { line[length &+ j] = line[j] }
            }
            positions[i] = end >= length ? end &- length : end
        }
    }

    /// The chunk after the DC blocker through the pre-delay and the two all-pass diffusers (gain
    /// 0.6), in place, in runs in which none of the three wraps (so nothing a run reads from
    /// them was written in it).
    @_noLocks
    @inline(__always)
    mutating func diffuse(frameCount m: Int) {
        let chunk = work + (Reverb.diffusedPart &+ 4)
        var predelay = predelayPosition, position0 = diffuserPosition0, position1 = diffuserPosition1
        var j = 0
        while j < m {
            let count = min(
                min(m &- j, predelayLength &- predelay),
                min(diffuserLength0 &- position0, diffuserLength1 &- position1))
            let x = chunk + j, before = predelayLine + predelay
            let line0 = diffusers + position0, line1 = diffusers + (diffuserLength0 &+ position1)
            var k = 0
            while k &+ 4 <= count {
                let delayed = UnsafeRawPointer(before + k).loadUnaligned(as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(before + k).storeBytes(
                    of: UnsafeRawPointer(x + k).loadUnaligned(as: SIMD4<Float>.self),
                    as: SIMD4<Float>.self)
                let a = allPass(delayed, line: line0 + k)
                UnsafeMutableRawPointer(x + k).storeBytes(of: allPass(a, line: line1 + k), as: SIMD4<Float>.self)
                k &+= 4
            }
            while k < count {
                let delayed = before[k]
                before[k] = x[k]
                let v0 = flush(delayed + 0.6 * line0[k])
                let a = line0[k] - 0.6 * v0
                line0[k] = v0
                let v1 = flush(a + 0.6 * line1[k])
                x[k] = line1[k] - 0.6 * v1
                line1[k] = v1
                k &+= 1
            }
            j &+= count
            predelay &+= count
            if predelay == predelayLength { predelay = 0 }
            position0 &+= count
            if position0 == diffuserLength0 { position0 = 0 }
            position1 &+= count
            if position1 == diffuserLength1 { position1 = 0 }
        }
        predelayPosition = predelay
        diffuserPosition0 = position0
        diffuserPosition1 = position1
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
        work.update(repeating: 0, count: Reverb.factorsPart)
        predelayLine.update(repeating: 0, count: predelayLength)
        diffusers.update(repeating: 0, count: diffuserLength0 + diffuserLength1)
        quietFrames = 0
        fade = Ramp(1)
        idle = true
    }
}

/// 4 frames `x` through a Schroeder all-pass of gain 0.6 whose delay is at `line` (its run at
/// the frames' place, which takes the new values). Real-time safe.
@_noLocks
@inline(__always)
func allPass(_ x: SIMD4<Float>, line: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
    let delayed = UnsafeRawPointer(line).loadUnaligned(as: SIMD4<Float>.self)
    let v = ((x + 0.6 * delayed) + 1e-18) - 1e-18 // flush, lane by lane
    UnsafeMutableRawPointer(line).storeBytes(of: v, as: SIMD4<Float>.self)
    return delayed - 0.6 * v
}

/// The larger of a and b, lane by lane (for magnitudes, never NaN). Real-time safe.
@_noLocks
@inline(__always)
func pointwiseLarger(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> {
    a.replacing(with: b, where: b .> a)
}

/// |v|, lane by lane. Real-time safe.
@_noLocks
@inline(__always)
func magnitude(_ v: SIMD4<Float>) -> SIMD4<Float> {
    unsafeBitCast(unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7fff_ffff, to: SIMD4<Float>.self)
}

/// `x` with anything under about 1e-25 rounded to exactly 0 (adding and taking away 1e-18;
/// the compiler keeps both, as IEEE arithmetic requires). Real-time safe.
@_noLocks
@inline(__always)
func flush(_ x: Float) -> Float { (x + 1e-18) - 1e-18 }

/// 10^x without Foundation (control thread).
func exp10(_ x: Double) -> Double { exp2(x * 3.321_928_094_887_362_4) }
