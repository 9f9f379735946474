import BellkeysModel

// The reverb (a feedback delay network): its memory and layout, its design from a preset at init,
// and `process`, which runs each chunk through the input chain (ReverbInputChain.swift) and the
// network (ReverbNetwork.swift); the gate, the fade and `clear`.

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
    // The constants the network's and the input chain's files read are computed, with the
    // attribute: a debug build checks `@_noLocks` file by file, and reading another file's
    // `static let` goes through its lazy initialiser. (Optimised, each is its number.)
    static var lineCount: Int { @_noLocks get { 8 } }
    /// Delay lengths at 48 kHz for a hall (size 1): primes, spread over 21 to 61 ms (scaled to
    /// other rooms and rates and rounded, they stay distinct, if not all prime).
    static let baseLengths = [1_031, 1_327, 1_523, 1_801, 2_083, 2_351, 2_659, 2_909]
    static let diffuserLengths = [142, 379]
    static let gateLevel: Float = 1e-6
    /// The most frames `process` mixes at a time (a multiple of 4; fewer if a line is shorter).
    static let chunkCapacity = 64

    // The parts of `work` (in floats, each 16-byte aligned).
    /// Per line: its low-pass's last 4 outputs, then a chunk's outputs (and up to 3 past them).
    static var outputsStride: Int { @_noLocks get { 4 + chunkCapacity + 4 } }
    static var outputsPart: Int { @_noLocks get { 0 } }
    /// Per line (4 each): lanes 1, 2, 3 are its output 3, 2, 1 frames before the chunk.
    static var historyPart: Int { @_noLocks get { outputsPart + lineCount * outputsStride } }
    /// Per line (4 each): what `lowpassLines` and `mixLines` put back into the line.
    static var savedPart: Int { @_noLocks get { historyPart + 4 * lineCount } }
    /// The input's last 4 frames, then a chunk of it (and up to 3 past it).
    static var inputPart: Int { @_noLocks get { savedPart + 4 * lineCount } }
    /// The DC blocker's last 4 outputs, then the chunk's (and up to 3 past it), which the rest
    /// of the input chain changes in place.
    static var diffusedPart: Int { @_noLocks get { inputPart + 4 + chunkCapacity + 4 } }
    /// A chunk's last frames when they are fewer than 4: what goes to the left, to the right.
    static var sidesPart: Int { @_noLocks get { diffusedPart + 4 + chunkCapacity + 4 } }
    /// Everything before is state or scratch (zeroed by `clear`); from here on, constants:
    /// per line c g / √8 (see `lowpassLines`), then 1 - c, (1 - c)^4, then the DC blocker's
    /// a, a - 1, -a³, a⁴ (see `lowpassGroups`), each × 4.
    static var factorsPart: Int { @_noLocks get { sidesPart + 8 } }
    static var highPassPart: Int { @_noLocks get { factorsPart + 4 * lineCount + 8 } }
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

/// 10^x without Foundation (control thread).
func exp10(_ x: Double) -> Double { exp2(x * 3.321_928_094_887_362_4) }

extension ReverbPreset {
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
